import { consoleStylesheet } from '../../console/views.js';
import { stylesheet } from '../../experience/views/stylesheet.js';

/** Every block of `css` under a `prefers-color-scheme` media query, as its text between the braces. */
function schemeBlocks(css: string): string[] {
  const blocks: string[] = [];
  for (const match of css.matchAll(/@media[^{]*prefers-color-scheme[^{]*\{/g)) {
    let depth = 1;
    let end = match.index + match[0].length;
    while (depth > 0 && end < css.length) {
      if (css[end] === '{') depth += 1;
      if (css[end] === '}') depth -= 1;
      end += 1;
    }
    blocks.push(css.slice(match.index + match[0].length, end - 1));
  }
  return blocks;
}

/**
 * The browser suites check the dark scheme with axe-core's colour rules alone (spec/support/chromium.ts,
 * `pageProblems`): sound only while a colour scheme changes colours and nothing else. A dark block
 * that set a width, a display or a font would make the other rules' findings differ between the
 * schemes, and this test says so.
 */
describe('the colour schemes of the pages and the console', () => {
  /** What `css` declares under a colour scheme besides custom properties; throws where it declares nothing there. */
  function otherThanColours(css: string): string[] {
    const declarations = schemeBlocks(css).flatMap((block) =>
      block
        .replace(/[^{]*\{([^}]*)\}/g, '$1;')
        .split(';')
        .map((declaration) => declaration.trim())
        .filter(Boolean),
    );
    if (declarations.length === 0) throw new Error('no colour scheme block found');
    return declarations.filter((declaration) => !declaration.startsWith('--'));
  }

  it('the dark scheme sets custom properties (colours) and nothing else', () => {
    const pages = stylesheet({ primaryColor: '#5d34f2', darkPrimaryColor: '#8b6cf7' });
    expect(otherThanColours(`${pages}\n${consoleStylesheet}`)).toEqual([]);
  });

  it('would see a dark block that changes the layout', () => {
    const css = '@media (prefers-color-scheme: dark) { :root { --text: #fff; } nav a { display: none; } }';
    expect(otherThanColours(css)).toEqual(['display: none']);
  });
});
