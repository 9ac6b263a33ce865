import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[] }[];
}

/** What this needs of a page: Playwright's and puppeteer's (Firefox) both have it. */
interface EvaluatingPage {
  evaluate<R>(fn: () => R | Promise<R>): Promise<R>;
  evaluate(source: string): Promise<unknown>;
}

/** axe-core over the widget (its shadow root included): the serious and critical violations. */
export async function seriousViolations(
  page: EvaluatingPage,
): Promise<{ id: string; help: string; targets: string }[]> {
  // Evaluated, not a <script>: the demo page's CSP forbids inline scripts, as a customer's might.
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    // Contrast is judged once the panel has finished fading in, as a visitor reads it.
    const root = document.querySelector('[data-concierge]')!.shadowRoot!;
    await Promise.all(
      root
        .getAnimations()
        .filter((a) => a.effect?.getTiming().iterations !== Infinity)
        .map((a) => a.finished),
    );
    const axe = (
      window as unknown as { axe: { run(context: unknown, options: unknown): Promise<{ violations: AxeViolation[] }> } }
    ).axe;
    return (await axe.run({ include: [['[data-concierge]']] }, { resultTypes: ['violations'] })).violations;
  });
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({ id: v.id, help: v.help, targets: JSON.stringify(v.nodes.map((n) => n.target)) }));
}

/** How the open panel sits on the page: what a visitor would see cut, wrapped or left showing under it. */
export interface PanelLayout {
  /** Every control of the composer (the text box, the mic, Send) lies inside the panel. */
  composerInside: boolean;
  /** The title takes one line. */
  titleOneLine: boolean;
  /** The language menu shows its chosen language whole (none: no menu). */
  menuWhole: boolean | null;
  /** The panel covers the whole viewport (a phone's sheet). */
  fullScreen: boolean;
  /** The launcher is visible beside or under the panel. */
  launcherShown: boolean;
}

/** The open panel's layout once it has come in, measured in the page (Chromium through Playwright, Firefox through puppeteer). */
export function panelLayout(page: EvaluatingPage): Promise<PanelLayout> {
  return page.evaluate(async () => {
    const root = document.querySelector('[data-concierge]')!.shadowRoot!;
    await Promise.all(root.getAnimations().map((a) => a.finished));
    const panel = root.querySelector('.panel')!.getBoundingClientRect();
    const within = (el: Element) => {
      const r = el.getBoundingClientRect();
      return r.left >= panel.left - 0.5 && r.right <= panel.right + 0.5 && r.bottom <= panel.bottom + 0.5;
    };
    const title = root.querySelector('.head h2') as HTMLElement;
    const lineHeight =
      parseFloat(getComputedStyle(title).lineHeight) || parseFloat(getComputedStyle(title).fontSize) * 1.5;
    const menu = root.querySelector('.head select') as HTMLSelectElement | null;
    let menuWhole: boolean | null = null;
    if (menu) {
      // The chosen option's text, in the menu's font, beside the room the menu gives it (less its arrow).
      const context = document.createElement('canvas').getContext('2d')!;
      const style = getComputedStyle(menu);
      context.font = `${style.fontSize} ${style.fontFamily}`;
      const text = context.measureText(menu.selectedOptions[0]!.text).width;
      menuWhole = text + parseFloat(style.paddingLeft) + parseFloat(style.paddingRight) + 16 <= menu.clientWidth;
    }
    const launcher = root.querySelector('.launcher') as HTMLElement;
    return {
      composerInside: [...root.querySelectorAll('form textarea, form button')].every(within),
      titleOneLine: title.getBoundingClientRect().height < lineHeight * 1.5,
      menuWhole,
      fullScreen:
        panel.left <= 0 && panel.top <= 0 && panel.right >= innerWidth - 0.5 && panel.bottom >= innerHeight - 0.5,
      launcherShown: launcher.getClientRects().length > 0 && getComputedStyle(launcher).visibility === 'visible',
    };
  });
}

/** The screens the panel is laid out on: a laptop's, and a 390 px phone's. */
export const PANEL_SCREENS = [
  { width: 1280, height: 800 },
  { width: 390, height: 844 },
] as const;

/** The layout the panel must have on a screen this wide: whole, on one line, and a full sheet on a phone. */
export const fittingLayout = (width: number): PanelLayout => ({
  composerInside: true,
  titleOneLine: true,
  menuWhole: true,
  fullScreen: width <= 480,
  launcherShown: width > 480,
});
