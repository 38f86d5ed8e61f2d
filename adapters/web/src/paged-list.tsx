import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { RowSource } from './row-pages.js';

/** Props of {@link PagedList}. */
export interface PagedListProps<T> {
  readonly rows: RowSource<T>;
  /** Every row's height, px. */
  readonly rowHeight: number;
  /** The viewport's height, px. */
  readonly height: number;
  readonly label: string;
  /** Draws row `index`; `item` is undefined while its page loads. */
  readonly render: (item: T | undefined, index: number) => ComponentChildren;
}

/**
 * A virtual list over a {@link RowSource}: only the rows in view (plus a few) are in the DOM, and only their pages
 * are fetched, when they come into view. The same markup as `VirtualList`.
 */
export const PagedList = <T,>({ rows, rowHeight, height, label, render }: PagedListProps<T>) => {
  const [top, setTop] = useState(0);
  const [, setLoaded] = useState(0);
  const first = Math.max(0, Math.floor(top / rowHeight) - 5);
  const last = Math.min(rows.total, Math.ceil((top + height) / rowHeight) + 5);
  useEffect(() => {
    let current = true;
    void rows.ensure(first, last)?.then(() => current && setLoaded((n) => n + 1));
    return () => {
      current = false;
    };
  }, [rows, first, last]);
  const items = [];
  for (let i = first; i < last; i++) {
    items.push(
      <li key={i} role="listitem" style={{ position: 'absolute', top: `${i * rowHeight}px`, height: `${rowHeight}px`, left: 0, right: 0 }}>
        {render(rows.get(i), i)}
      </li>,
    );
  }
  return (
    <div class="vlist" tabIndex={0} style={{ height: `${Math.min(height, Math.max(rowHeight, rows.total * rowHeight))}px` }} onScroll={(e) => setTop((e.currentTarget as HTMLElement).scrollTop)}>
      <ul role="list" aria-label={label} style={{ height: `${rows.total * rowHeight}px`, position: 'relative', margin: 0, padding: 0, listStyle: 'none' }}>
        {items}
      </ul>
    </div>
  );
};
