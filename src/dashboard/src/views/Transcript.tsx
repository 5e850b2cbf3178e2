/** A command's complete output, as the host ran it (the `$ command` line first). */
export function Transcript({ text, exitCode }: { text: string; exitCode?: number }) {
  return (
    <div class="transcript">
      {exitCode !== undefined ? (
        <p class={exitCode === 0 ? 'ok' : 'bad'} data-testid="exit-code">
          exit code {exitCode}
        </p>
      ) : null}
      <pre tabIndex={0} aria-label="Transcript" data-testid="transcript">
        {text}
      </pre>
    </div>
  );
}
