import { cpus, totalmem } from 'node:os';

/** One line naming the machine a benchmark ran on. */
export const machineLine = (): string => {
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  return `${cpu.trim()} × ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, ${process.platform}/${process.arch}`;
};

/**
 * The median of `xs`: the middle value, or for an even count the mean of the two middle ones (not the upper one:
 * with 12 pairs of rounds that would report the 7th smallest, biased upwards).
 */
export const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

export const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');
