import { parseArgs } from 'node:util';

/** The options one command accepts: `--name value` strings and bare `--flag` booleans. */
export interface CommandOptions {
  readonly strings?: readonly string[];
  readonly flags?: readonly string[];
}

/** Parsed arguments of one command, or a usage error (one line). */
export type CommandArgs =
  | {
      readonly ok: true;
      readonly positionals: readonly string[];
      readonly strings: Readonly<Record<string, string | undefined>>;
      readonly flags: Readonly<Record<string, boolean>>;
    }
  | { readonly ok: false; readonly error: string };

/**
 * Parses a command's arguments with `node:util` parseArgs (strict): `--name value` and `--name=value`, bare flags,
 * positionals anywhere, and `--` ending the options (everything after it is positional, even `--json`).
 * An unknown option or a missing value is a usage error, never an exception.
 */
export const parseCommandArgs = (argv: readonly string[], spec: CommandOptions): CommandArgs => {
  const options: Record<string, { type: 'string' | 'boolean' }> = {};
  for (const name of spec.strings ?? []) options[name] = { type: 'string' };
  for (const name of spec.flags ?? []) options[name] = { type: 'boolean' };
  try {
    const { values, positionals } = parseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
    const strings: Record<string, string | undefined> = {};
    const flags: Record<string, boolean> = {};
    for (const name of spec.strings ?? []) strings[name] = values[name] as string | undefined;
    for (const name of spec.flags ?? []) flags[name] = values[name] === true;
    return { ok: true, positionals, strings, flags };
  } catch (e) {
    return { ok: false, error: e instanceof Error ? e.message.split('\n')[0]! : String(e) };
  }
};

/** True when the arguments ask for help (`--help` or `-h` before any `--`). */
export const wantsHelp = (argv: readonly string[]): boolean => {
  for (const a of argv) {
    if (a === '--') return false;
    if (a === '--help' || a === '-h') return true;
  }
  return false;
};
