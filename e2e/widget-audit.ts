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
