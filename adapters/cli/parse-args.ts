/** Parsed command-line arguments: positionals, `--name value` options and `--flag`s. */
export type ParsedArgs =
  | { readonly ok: true; readonly positional: string[]; readonly values: Record<string, string | undefined>; readonly flags: Record<string, boolean> }
  | { readonly ok: false; readonly error: string };

/** Parses `--name value` (also `--name=value`) for the names in `values`, and bare `--flag`s; anything else starting with `-` is an error. */
export const parseArgs = (argv: readonly string[], spec: { readonly values?: readonly string[]; readonly flags?: readonly string[] }): ParsedArgs => {
  const positional: string[] = [];
  const values: Record<string, string | undefined> = {};
  const flags: Record<string, boolean> = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (!a.startsWith('--')) {
      if (a.startsWith('-') && a !== '-') return { ok: false, error: `unknown option ${a}` };
      positional.push(a);
      continue;
    }
    const [name, inline] = a.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
    if (spec.flags?.includes(name)) {
      flags[name] = true;
    } else if (spec.values?.includes(name)) {
      const value = inline ?? argv[++i];
      if (value === undefined) return { ok: false, error: `--${name} needs a value` };
      values[name] = value;
    } else {
      return { ok: false, error: `unknown option --${name}` };
    }
  }
  return { ok: true, positional, values, flags };
};
