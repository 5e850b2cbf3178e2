import { apiUrl, enc, evidenceHead, post } from '../api';
import { size } from '../error-words';
import { useFetch } from '../ui';

// A thread's evidence: each file under the reply (or the post) that carried it, images inline.

/** Evidence: images inline (recognized by their first bytes), anything else as a download. */
export function Evidence({ hashes }: { hashes: readonly string[] }) {
  if (!hashes.length) return null;
  return (
    <div class="evidence">
      <h3>Evidence</h3>
      <ul>
        {hashes.map((h) => (
          <EvidenceItem key={h} hash={h} />
        ))}
      </ul>
    </div>
  );
}

/** Stores a file as evidence with its name and type (kept beside the bytes, served back with them). */
export function putEvidence(f: File): Promise<{ hash: string }> {
  return post<{ hash: string }>('api/evidence', f, true, { 'X-Filename': encodeURIComponent(f.name), 'Content-Type': f.type || 'application/octet-stream' });
}

function EvidenceItem({ hash }: { hash: string }) {
  const kind = useFetch(() => sniff(hash), [hash]);
  const url = apiUrl(`api/evidence/${enc(hash)}`);
  const name = kind.data?.name ?? null;
  const label = name ?? `evidence ${hash.slice(0, 12)}`;
  return (
    <li data-evidence={hash}>
      {kind.data?.image ? (
        <a class="evidence-image" href={url} target="_blank" rel="noopener noreferrer">
          <img src={url} alt={label} loading="lazy" />
        </a>
      ) : null}
      <a href={url} download={name ?? `evidence-${hash.slice(0, 12)}`} data-testid="evidence-file">
        ⤓ {name ?? `${hash.slice(0, 12)}…`}
        {kind.data?.type ? <span class="muted small"> ({kind.data.type}{kind.data.size !== null ? `, ${size(kind.data.size)}` : ''})</span> : ' (download)'}
      </a>
    </li>
  );
}

/** Whether the evidence is an image (by its first bytes), and the name, type and size it was stored with. */
async function sniff(hash: string): Promise<{ image: boolean; name: string | null; type: string | null; size: number | null }> {
  const head = await evidenceHead(hash, 16);
  if (head.status >= 300) return { image: false, name: null, type: null, size: null };
  const b = head.bytes;
  const at = (i: number, ...v: number[]) => v.every((x, k) => b[i + k] === x);
  const image = at(0, 0x89, 0x50, 0x4e, 0x47) || at(0, 0xff, 0xd8, 0xff) || at(0, 0x47, 0x49, 0x46, 0x38) || (at(0, 0x52, 0x49, 0x46, 0x46) && at(8, 0x57, 0x45, 0x42, 0x50));
  return { image, name: head.name, type: head.type, size: head.total };
}
