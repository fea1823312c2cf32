const escapes: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
/** Escapes text for HTML element content and double-quoted attributes. */
export const escapeHtml = (value: string) => value.replace(/[&<>"']/g, (character) => escapes[character]!);

/** A trusted piece of markup: only the templates of the views make one. */
export class Html {
  constructor(readonly markup: string) {}
  toString() {
    return this.markup;
  }
}

/** A tagged template that escapes every value that is not already markup. */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  const render = (value: unknown): string => {
    if (value instanceof Html) return value.markup;
    if (Array.isArray(value)) return value.map(render).join('');
    if (value === undefined || value === null || value === false) return '';
    return escapeHtml(String(value));
  };
  return new Html(strings.reduce((markup, part, index) => markup + part + (index < values.length ? render(values[index]) : ''), ''));
}
