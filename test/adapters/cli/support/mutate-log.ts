/**
 * One fuzz mutation of an envelope log: 1–3 random edits (a flipped byte, a line dropped, duplicated, swapped or cut,
 * a field replaced by an odd value, the log truncated, an unknown event type), joined by LF or CRLF. The same
 * `random` sequence gives the same log (test/adapters/cli/fuzz.test.ts, the recorded CLI outputs).
 */
export const mutateLog = (lines: readonly string[], random: () => number): string => {
  const out = [...lines];
  const pick = () => Math.floor(random() * out.length);
  const mutations = 1 + Math.floor(random() * 3);
  for (let m = 0; m < mutations && out.length > 0; m++) {
    const i = pick();
    switch (Math.floor(random() * 8)) {
      case 0: {
        const b = Buffer.from(out[i]!, 'utf8');
        b[Math.floor(random() * b.length)] = Math.floor(random() * 256);
        out[i] = b.toString('utf8');
        break;
      }
      case 1:
        out.splice(i, 1);
        break;
      case 2:
        out.splice(i, 0, out[pick()]!);
        break;
      case 3: {
        const j = pick();
        [out[i], out[j]] = [out[j]!, out[i]!];
        break;
      }
      case 4:
        out[i] = out[i]!.slice(0, Math.floor(random() * out[i]!.length));
        break;
      case 5: {
        let o: Record<string, unknown>;
        try {
          o = JSON.parse(out[i]!) as Record<string, unknown>;
        } catch {
          break; // already mangled
        }
        if (typeof o !== 'object' || o === null) break;
        const keys = Object.keys(o);
        const k = keys[Math.floor(random() * keys.length)]!;
        const values: unknown[] = [null, -1, 1e308, 'x', [], {}, true, '', 2 ** 53, '\u0000'];
        o[k] = values[Math.floor(random() * values.length)];
        out[i] = JSON.stringify(o);
        break;
      }
      case 6:
        out.length = Math.floor(random() * out.length);
        break;
      default:
        out[i] = out[i]!.replace(/"[a-z]+\/[a-z-]+"/, '"no/such-type"');
    }
  }
  return out.join(random() < 0.5 ? '\n' : '\r\n');
};
