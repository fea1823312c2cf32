/**
 * Code in the guides that is the examples' own: a guide marks where it includes a region of a
 * source (`<!-- include examples/embedded.ts#embed -->`, a fenced block, `<!-- /include -->`), the
 * source marks the region (`// #region embed` ... `// #endregion embed`), and the block is the
 * region's text, so that the code a reader copies is the code the tests run.
 */
const includePattern = /(<!-- include ([^#\s]+)#([\w-]+) -->\n)```(\w*)\n[\s\S]*?```\n(<!-- \/include -->)/g;

/** The region `name` of a source's text, without its markers and its common indentation. */
export function regionOf(source: string, name: string, path = 'the source'): string {
  const start = source.indexOf(`// #region ${name}\n`);
  const end = source.indexOf(`// #endregion ${name}`);
  if (start < 0 || end < start) throw new Error(`${path} has no region "${name}"`);
  const lines = source.slice(source.indexOf('\n', start) + 1, source.lastIndexOf('\n', end) + 1).split('\n');
  const indent = Math.min(...lines.filter((line) => line.trim()).map((line) => line.length - line.trimStart().length));
  return lines.map((line) => line.slice(indent)).join('\n');
}

/** `markdown` with each included block filled from its source (read by `read(path)`). */
export async function renderIncludes(markdown: string, read: (path: string) => Promise<string>): Promise<string> {
  const found = [...markdown.matchAll(includePattern)];
  let rendered = markdown;
  for (const [whole, opening, path, region, language, closing] of found) {
    const code = regionOf(await read(path!), region!, path);
    rendered = rendered.replace(whole, `${opening}\`\`\`${language}\n${code}\`\`\`\n${closing}`);
  }
  return rendered;
}
