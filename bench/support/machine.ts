import { cpus, totalmem } from 'node:os';

/** One line naming the machine a benchmark ran on. */
export const machineLine = (): string => {
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  return `${cpu.trim()} × ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, ${process.platform}/${process.arch}`;
};

export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
};

export const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');
