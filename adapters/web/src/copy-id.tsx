import { useState } from 'preact/hooks';

/** The first characters of an id, enough to tell ids apart on screen (the whole id stays in the title and the copy). */
export const shortId = (id: string, keep = 10): string => (id.length > keep + 1 ? `${id.slice(0, keep)}…` : id);

/**
 * An id shown short, with a button that copies it whole (`label` names what is copied for screen readers); the
 * button says "Copied" for a moment after a copy.
 */
export const CopyId = ({ id, label = 'id', shown }: { id: string; label?: string; shown?: string }) => {
  const [copied, setCopied] = useState(false);
  return (
    <span class="copy-id">
      <code title={id} data-id={id}>
        {shortId(shown ?? id)}
      </code>
      <button
        type="button"
        class="icon-button"
        aria-label={`Copy ${label} ${id}`}
        onClick={() =>
          void navigator.clipboard?.writeText(id).then(
            () => {
              setCopied(true);
              setTimeout(() => setCopied(false), 1200);
            },
            () => {},
          )
        }
      >
        {copied ? 'Copied' : 'Copy'}
      </button>
    </span>
  );
};
