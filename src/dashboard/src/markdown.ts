import MarkdownIt from 'markdown-it';

/**
 * Markdown from specs, issues and replies. `html: false`: raw HTML in the source is shown as text, never
 * parsed, so `<script>` or `<img onerror>` in a node or a reply cannot run. markdown-it's link validator
 * refuses `javascript:`, `vbscript:` and non-image `data:` URLs. Links open in a new tab without an
 * opener or a referrer. `[[node-id]]` links go to that node's page.
 */
const md = new MarkdownIt({ html: false, linkify: true, typographer: false });

const defaultLinkOpen = md.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
  const t = tokens[idx]!;
  const target = String(t.attrGet('href') ?? '');
  if (!target.startsWith('#')) {
    t.attrSet('target', '_blank');
    t.attrSet('rel', 'noopener noreferrer');
  }
  return defaultLinkOpen(tokens, idx, options, env, self);
};

// `[[auth/login]]`: a wiki link to a node, turned into an ordinary link before parsing.
const WIKI = /\[\[([a-z0-9][a-z0-9._/-]*)\]\]/gi;

export function renderMarkdown(src: string): string {
  return md.render(src.replace(WIKI, (_m, id: string) => `[${id}](#/node/${id})`));
}
