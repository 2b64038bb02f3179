// The dashboard's one table: columns declared once, each cell labelled with its column so that
// on a phone (styles.css, `table.stack`) every row becomes a card of "label: value" lines
// instead of columns cut off at the screen's edge.
import type { ReactNode } from 'react';

export interface Column<T> {
  label: string;
  cell: (row: T) => ReactNode;
  /** Right-aligned numbers on wide screens. */
  num?: boolean;
  /** The header is for screen readers only (e.g. a row's buttons). */
  hideLabel?: boolean;
}

export function Table<T>({
  rows,
  columns,
  rowKey,
  caption,
  rowProps,
}: {
  rows: readonly T[];
  columns: readonly Column<T>[];
  rowKey: (row: T) => string;
  caption?: string;
  rowProps?: (row: T) => Record<string, string | undefined>;
}) {
  return (
    <div className="table-wrap">
      <table className="stack">
        {caption ? <caption className="visually-hidden">{caption}</caption> : null}
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c.label} scope="col">
                {c.hideLabel ? <span className="visually-hidden">{c.label}</span> : c.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={rowKey(r)} {...rowProps?.(r)}>
              {columns.map((c) => (
                <td key={c.label} data-label={c.hideLabel ? '' : c.label} className={c.num ? 'num' : undefined}>
                  <div>{c.cell(r)}</div>
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
