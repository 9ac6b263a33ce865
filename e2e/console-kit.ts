import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { expect, type Page } from '@playwright/test';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
export const PASSWORD = 'harbor hotel console 2026';

/** No serious or critical accessibility violation on the page as it is now, and a screenshot of it. */
export async function audit(page: Page, name: string) {
  await page.evaluate(AXE);
  const violations = await page.evaluate(async () => {
    // Contrast is judged once what fades in (the widget's panel on Try it) has finished, as a reader sees it.
    const widget = document.querySelector('[data-concierge]')?.shadowRoot;
    const fading = [...document.getAnimations(), ...(widget?.getAnimations() ?? [])].filter(
      (a) => a.effect?.getTiming().iterations !== Infinity,
    );
    await Promise.all(fading.map((a) => a.finished));
    const result = await (
      window as unknown as {
        axe: {
          run(
            o: object,
          ): Promise<{ violations: { id: string; impact: string; help: string; nodes: { target: string[] }[] }[] }>;
        };
      }
    ).axe.run({ resultTypes: ['violations'] });
    return result.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
  });
  expect(violations, name).toEqual([]);
  await page.screenshot({ path: `test-results/console/${name}.png`, fullPage: true });
}

export const nav = (page: Page, name: string) =>
  page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name, exact: true });

/** Every console error and uncaught exception of the page: the console must have none, its CSP included. */
export function consoleErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  page.on('pageerror', (e) => errors.push(e.message));
  return errors;
}

/** Opens a one-time welcome link (a page's own address for it) and chooses the password: signed in. */
export async function choosePassword(page: Page, link: string) {
  await page.goto(link);
  await page.getByLabel('Password (at least 12 characters)').fill(PASSWORD);
  await page.getByLabel('The same password again').fill(PASSWORD);
  await page.getByRole('button', { name: 'Set password and sign in' }).click();
}

/** A customer's management API call with their key: the `data` of a 2xx answer, failing the test on anything else. */
export const managementApi =
  (serviceUrl: string, apiKey: string) =>
  async (method: string, path: string, body?: unknown): Promise<any> => {
    const res = await fetch(`${serviceUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    expect(res.status, `${method} ${path}`).toBeLessThan(300);
    return ((await res.json()) as { data: any }).data;
  };
