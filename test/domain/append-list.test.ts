import { describe, expect, it } from 'vitest';
import { appendAll, appendListItems, appendOne, emptyAppendList, sealedItems } from '../../domain/append-list.js';

describe('append list', () => {
  it('the newest version pushes in place; an older one branches and never changes for its holders', () => {
    const a = appendAll(emptyAppendList<string>(), ['a', 'b']);
    const b = appendOne(a, 'c');
    expect(b.shared).toBe(a.shared);
    const branch = appendOne(a, 'x');
    expect(branch.shared).not.toBe(a.shared);
    expect(appendListItems(a)).toEqual(['a', 'b']);
    expect(appendListItems(b)).toEqual(['a', 'b', 'c']);
    expect(appendListItems(branch)).toEqual(['a', 'b', 'x']);
  });

  it('sealedItems hands the newest version its array whole, and no later append of any version changes it', () => {
    const a = appendAll(emptyAppendList<string>(), ['a', 'b']);
    const b = appendOne(a, 'c');
    const sealed = sealedItems(b);
    expect(sealed).toBe(b.shared);
    expect(Object.isFrozen(sealed)).toBe(true);
    // the sealed version itself, and an older one, branch on their next append
    const after = appendOne(b, 'd');
    const older = appendOne(a, 'y');
    expect(sealed).toEqual(['a', 'b', 'c']);
    expect(appendListItems(after)).toEqual(['a', 'b', 'c', 'd']);
    expect(appendListItems(older)).toEqual(['a', 'b', 'y']);
    // sealing again gives the same array; an older version's items are a copy of its own
    expect(sealedItems(b)).toBe(sealed);
    expect(sealedItems(a)).toEqual(['a', 'b']);
    expect(sealedItems(a)).not.toBe(sealed);
    expect(sealedItems(emptyAppendList<string>())).toEqual([]);
  });
});
