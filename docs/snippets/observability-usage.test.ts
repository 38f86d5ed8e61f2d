import { describe, expect, it } from 'vitest';
import { liveAndLater } from './observability-usage.js';

describe('docs/observability.md snippets run', () => {
  it('the live export and the later trace of a session have the same span ids', async () => {
    const { live, later, same, request } = await liveAndLater();
    expect(live.length).toBe(3);
    expect(live).toEqual(later);
    expect(same).toEqual(later);
    expect(request.resourceSpans[0]!.scopeSpans[0]!.spans).toHaveLength(3);
  });
});
