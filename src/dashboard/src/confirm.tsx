import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';

/**
 * A button that asks in the page before it acts (never the browser's confirm(), which blocks the page, looks
 * like a security prompt and cannot be styled): a click turns it into the question with "Yes, …" and
 * Cancel, as the session page's Close and Quarantine do.
 */
export function ConfirmButton(props: { label: string; question: ComponentChildren; yes: string; onYes: () => void; disabled?: boolean; busyLabel?: string; busy?: boolean; class?: string }) {
  const [asking, setAsking] = useState(false);
  if (asking) {
    return (
      <span class="confirm" role="group" aria-label={`Confirm: ${props.label}`}>
        <span>{props.question}</span>
        <button class="button primary" type="button" onClick={() => (setAsking(false), props.onYes())}>
          {props.yes}
        </button>
        <button class="button" type="button" onClick={() => setAsking(false)}>
          Cancel
        </button>
      </span>
    );
  }
  return (
    <button class={props.class ?? 'button'} type="button" disabled={props.disabled} onClick={() => setAsking(true)}>
      {props.busy && props.busyLabel ? props.busyLabel : props.label}
    </button>
  );
}
