/**
 * The prompt message `session.prompt` builds per admission (host/prompt.ts `promptMessage`: a detached, deep-frozen
 * copy of the request's content and source) against `createUserMessage` (`structuredClone`, then `deepFreeze`), the
 * way it was built before: CPU time per message, a one-block text prompt as `bench:host` sends it, interleaved
 * rounds, medians.
 *
 *   npx tsx bench/prompt-message.ts [--calls 200000] [--rounds 5]
 */
import { loadavg } from 'node:os';
import { createUserMessage, type ContentBlock, type UserMessage } from '../domain/message.js';
import { promptMessage, toContentBlocks } from '../host/prompt.js';
import { argOf } from './support/bench-args.js';
import { machineLine, median } from './support/machine.js';

const CALLS = Number(argOf('calls', '200000'));
const ROUNDS = Number(argOf('rounds', '5'));
const source = { kind: 'user' as const, rpcId: 'bench-rpc-000001', actor: 'local' };
const content: ContentBlock[] = toContentBlocks([{ type: 'text', text: 'queued prompt 12345 from connection 17' }]);
let sink: UserMessage | null = null;
const run = (make: (id: string) => UserMessage): number => {
  const cpu = process.cpuUsage();
  for (let i = 0; i < CALLS; i++) sink = make(`m-${i}`);
  const used = process.cpuUsage(cpu);
  return ((used.user + used.system) * 1000) / CALLS;
};
const modes = {
  createUserMessage: (id: string) => createUserMessage(content, { ...source }, { newId: () => id }),
  promptMessage: (id: string) => promptMessage(id, content, { ...source }),
};
console.log(`# prompt-message — ${CALLS} calls × ${ROUNDS} rounds — machine: ${machineLine()}; ${new Date().toISOString()}; load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
for (const make of Object.values(modes)) run(make);
const per: Record<keyof typeof modes, number[]> = { createUserMessage: [], promptMessage: [] };
for (let r = 0; r < ROUNDS; r++) for (const name of Object.keys(modes) as (keyof typeof modes)[]) per[name].push(run(modes[name]));
const before = median(per.createUserMessage);
const after = median(per.promptMessage);
console.log(`median CPU per message: createUserMessage ${before.toFixed(0)} ns, promptMessage ${after.toFixed(0)} ns (${(after / before).toFixed(2)}×); ${sink === null ? '' : 'built'}`);
