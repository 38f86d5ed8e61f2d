import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';

/** Props of {@link VirtualList}. */
export interface VirtualListProps<T> {
  readonly items: readonly T[];
  /** Every row's height, px. */
  readonly rowHeight: number;
  /** The viewport's height, px. */
  readonly height: number;
  readonly label: string;
  readonly render: (item: T, index: number) => ComponentChildren;
}

/** A list that renders only the rows in view (plus a few), so a session with 100k entries scrolls without freezing. */
export const VirtualList = <T,>({ items, rowHeight, height, label, render }: VirtualListProps<T>) => {
  const [top, setTop] = useState(0);
  const first = Math.max(0, Math.floor(top / rowHeight) - 5);
  const last = Math.min(items.length, Math.ceil((top + height) / rowHeight) + 5);
  const rows = [];
  for (let i = first; i < last; i++) {
    rows.push(
      <li key={i} role="listitem" style={{ position: 'absolute', top: `${i * rowHeight}px`, height: `${rowHeight}px`, left: 0, right: 0 }}>
        {render(items[i]!, i)}
      </li>,
    );
  }
  return (
    <div class="vlist" tabIndex={0} style={{ height: `${Math.min(height, Math.max(rowHeight, items.length * rowHeight))}px` }} onScroll={(e) => setTop((e.currentTarget as HTMLElement).scrollTop)}>
      <ul role="list" aria-label={label} style={{ height: `${items.length * rowHeight}px`, position: 'relative', margin: 0, padding: 0, listStyle: 'none' }}>
        {rows}
      </ul>
    </div>
  );
};
