import { Context } from '@deepseek-ai/cordis';
import { AgentRegistry } from '@deepseek-ai/dsh-agent';
import { SessionStore, SessionId } from '@deepseek-ai/dsh-session';
import { LlmRuntime, LlmAdapter, createUserMessage, CallId } from '@deepseek-ai/dsh-llm';
import { ToolRuntime, defineTool } from '@deepseek-ai/dsh-tools';
import { SystemPrompt } from '@deepseek-ai/dsh-system-prompt';
import { AgentLoop } from '@deepseek-ai/dsh-agent-loop';
import { JsonlSessionPersistence } from '@deepseek-ai/dsh-session-persistence-jsonl';
import { rmSync } from 'node:fs';
rmSync('/tmp/i26-sess', { recursive: true, force: true });
const root = new Context();
for (const p of [SessionStore, LlmRuntime, SystemPrompt, ToolRuntime, AgentRegistry]) await root.plugin(p);
await root.plugin(JsonlSessionPersistence, { root: '/tmp/i26-sess', compression: 'none', writeBatchMaxDelayMs: 5 });
await root.plugin(AgentLoop, {});
let calls = 0;
class Scripted extends LlmAdapter {
  async *stream(o) {
    calls++;
    const last = o.messages.at(-1);
    const lastText = JSON.stringify(last.content);
    if (calls === 1) {
      yield { type: 'tool-call-delta', index: 0, id: CallId('c1'), name: 'look', argumentsDelta: '{"q":' };
      yield { type: 'tool-call-delta', index: 0, id: CallId('c1'), argumentsDelta: '"a"}' };
      yield { type: 'tool-call-delta', index: 1, id: CallId('c2'), name: 'look', argumentsDelta: '{"q":"b"}' };
      yield { type: 'finish', reason: { kind: 'tool-calls' } };
      return;
    }
    for (const t of ['Hel', 'lo ', 'the', 're']) { await new Promise(r => setTimeout(r, 2)); yield { type: 'text-delta', index: 0, text: t }; }
    yield { type: 'usage', usage: { inputTokens: 3, outputTokens: 4 } };
    yield { type: 'finish', reason: { kind: 'stop' } };
  }
}
root.llm.registerAdapter(['scripted'], new Scripted());
let agentRef;
root.tools.register(defineTool({ name: 'look', description: 'look', parameters: { q: { type: 'string' } }, output: { schema: { type: 'string' }, render: (a, v) => [{ type: 'text', text: v }] },
  isConcurrencySafe: () => true,
  async execute(args) { if (args.q === 'a') agentRef.steer(createUserMessage({ content: [{ type: 'text', text: 'steer!' }], source: { kind: 'user' } })); return 'saw ' + args.q; } }));
const h = await root.agents.create({ sessionId: SessionId('s1'), agentOptions: { provider: 'scripted', model: 'm1' }, meta: { cwd: '/tmp/work' } });
const a = h.agent; agentRef = a;
a.followup(createUserMessage({ content: [{ type: 'text', text: 'first' }], source: { kind: 'user' } }));
a.followup(createUserMessage({ content: [{ type: 'text', text: 'second' }], source: { kind: 'user' } }));
await a.whenIdle();
console.log(a.status, a.inbox.nextTurn.length, a.session.events.length);
await h.dispose();
await root.fiber.dispose();
