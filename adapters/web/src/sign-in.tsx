import { useState } from 'preact/hooks';
import type { WhoamiOutcome } from './api.js';
import type { SignInReason } from './auth.js';

/** Why the prompt is shown, in the console's words. */
export const REASON_TEXT: Readonly<Record<SignInReason, string>> = {
  required: 'This host requires a token. Enter the token steerlog serve was started with (--token or STEERLOG_TOKEN).',
  rejected: 'The host did not accept the token this tab held: it is wrong, or the host now uses another one. Sign in again.',
  'signed-out': 'Signed out: this tab no longer holds a token.',
};

/** What a refused sign-in says, by what the host answered. */
export const PROBLEM_TEXT: Readonly<Record<Exclude<WhoamiOutcome, { ok: true }>['reason'] | 'empty', string>> = {
  empty: 'Enter a token.',
  rejected: 'Wrong token: the host did not accept it. Check it and try again.',
  unreachable: 'The host is unreachable.',
  unexpected: 'The host gave an unexpected answer.',
};

/** Props of {@link SignInForm}. */
export interface SignInFormProps {
  readonly reason: SignInReason;
  readonly draft: string;
  readonly busy: boolean;
  /** Why the last attempt failed, or null. */
  readonly problem: string | null;
  readonly onDraft: (text: string) => void;
  readonly onSubmit: () => void;
}

/** The sign-in prompt, without state: why it is shown, the token field, Sign in, and the last attempt's problem. */
export const SignInForm = ({ reason, draft, busy, problem, onDraft, onSubmit }: SignInFormProps) => (
  <main class="sign-in" aria-label="Sign in">
    <h1>Sign in</h1>
    <p data-reason={reason}>{REASON_TEXT[reason]}</p>
    <form
      onSubmit={(e) => {
        e.preventDefault();
        onSubmit();
      }}
    >
      <label for="token-input">Token</label>
      <input id="token-input" type="password" autocomplete="off" spellcheck={false} value={draft} onInput={(e) => onDraft((e.currentTarget as HTMLInputElement).value)} />
      <button type="submit" class="primary" disabled={busy}>
        Sign in
      </button>
    </form>
    <p class="sign-in-note">The token is kept for this tab only (sessionStorage) and sent as an Authorization header.</p>
    <div role="alert">{problem ? <p class="notice">{problem}</p> : null}</div>
  </main>
);

/**
 * The sign-in prompt: checks the token with the host (`check`, which neither keeps it nor reports a 401) and hands
 * an accepted one to `onAccepted`; a refused one stays in the field with a message saying why.
 */
export const SignIn = ({ reason, check, onAccepted }: { reason: SignInReason; check: (token: string) => Promise<WhoamiOutcome>; onAccepted: (token: string, principal: string) => void }) => {
  const [draft, setDraft] = useState('');
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const submit = async () => {
    const token = draft.trim();
    if (token === '') return setProblem(PROBLEM_TEXT.empty);
    setBusy(true);
    const r = await check(token);
    setBusy(false);
    if (r.ok) onAccepted(token, r.principal);
    else setProblem(PROBLEM_TEXT[r.reason]);
  };
  return <SignInForm reason={reason} draft={draft} busy={busy} problem={problem} onDraft={setDraft} onSubmit={() => void submit()} />;
};
