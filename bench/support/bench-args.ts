/** The value after `--<name>` on the command line, or `dflt` when the flag is not given. */
export const argOf = (name: string, dflt: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : dflt;
};
