/**
 * Colour arithmetic for the stylesheet: an operator's or an application's brand colour may be any
 * hex colour, and the pages must still meet WCAG 2.2's contrast minimums with it (1.4.3: text
 * 4.5:1). So the text on a primary button, and links drawn in the brand colour, are derived here.
 */
type Rgb = [number, number, number];

const rgbOf = (hex: string): Rgb => [1, 3, 5].map((start) => parseInt(hex.slice(start, start + 2), 16)) as Rgb;
const hexOf = (rgb: Rgb) => `#${rgb.map((channel) => Math.round(channel).toString(16).padStart(2, '0')).join('')}`;

/** WCAG 2.2's relative luminance (sRGB). */
function luminance(hex: string): number {
  const [r, g, b] = rgbOf(hex).map((channel) => {
    const c = channel / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  }) as Rgb;
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** WCAG 2.2's contrast ratio of two colours, 1 to 21. */
export function contrast(a: string, b: string): number {
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (light + 0.05) / (dark + 0.05);
}

/** White or black, whichever reads better on `background`: one of them always reaches 4.5:1 (at worst about 4.58). */
export const textOn = (background: string) => (contrast('#ffffff', background) >= contrast('#000000', background) ? '#ffffff' : '#000000');

/**
 * `color` itself if it reads at `ratio` on `background`; otherwise the first mix of it toward
 * black (a light background) or white (a dark one) that does, so that the hue stays the brand's.
 */
export function readableOn(color: string, background: string, ratio = 4.5): string {
  if (contrast(color, background) >= ratio) return color;
  const toward: Rgb = luminance(background) > 0.5 ? [0, 0, 0] : [255, 255, 255];
  const from = rgbOf(color);
  for (let step = 1; step <= 20; step += 1) {
    const mixed = hexOf(from.map((channel, index) => channel + ((toward[index]! - channel) * step) / 20) as Rgb);
    if (contrast(mixed, background) >= ratio) return mixed;
  }
  return hexOf(toward);
}
