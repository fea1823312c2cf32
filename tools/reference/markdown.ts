/** The few pieces of Markdown the reference pages are written with. */

/** A table cell: one line, its pipes escaped. */
export const cell = (text: string): string => text.replaceAll('\n', ' ').replaceAll('|', '\\|');

export function table(head: string[], rows: string[][]): string {
  return [`| ${head.join(' | ')} |`, `| ${head.map(() => '---').join(' | ')} |`, ...rows.map((row) => `| ${row.map(cell).join(' | ')} |`)].join('\n');
}

/** The banner every generated page opens with: where it comes from, and how to make it again. */
export const generatedBanner = (source: string): string =>
  `<!-- Generated from ${source} by \`npm run docs\`; edit the source, not this page (spec/docs/reference.test.ts fails when they differ). -->`;
