const sheets = new Map<string, CSSStyleSheet>();

/**
 * Gives a shadow root `css` as a constructed stylesheet, once: no <style> element, so a strict
 * style-src CSP does not block it.
 */
export function adopt(root: ShadowRoot, css: string): void {
  let sheet = sheets.get(css);
  if (!sheet) {
    sheet = new CSSStyleSheet();
    sheet.replaceSync(css);
    sheets.set(css, sheet);
  }
  if (!root.adoptedStyleSheets.includes(sheet)) root.adoptedStyleSheets = [...root.adoptedStyleSheets, sheet];
}
