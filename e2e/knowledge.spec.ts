import { pdfOf } from '../server/test/pdf-file.js';
import { audit, choosePassword, consoleErrors, nav } from './console-kit.js';
import {
  answeredByHotelServer,
  ask,
  conversation,
  expect,
  launcher,
  scriptedSpeech,
  spoken,
  test,
} from './fixtures.js';

/**
 * Answers from your documents (README) in real Chromium: the demo hotel's concierge answering from
 * its guest guide (a page of the demo site the service fetched into a knowledge base), with no
 * server and no model, switched on from the QA panel as QA would.
 */

test.afterEach(({ stack }) => answeredByHotelServer(stack));

test("Chromium: the hotel's pages answer a guest, the source is linked (shown, never said), and what they do not hold goes to a person", async ({
  page,
  context,
  stack,
}) => {
  await scriptedSpeech(page, { words: ['Where can I park?'] });
  await page.goto(`${stack.demoUrl}/qa`);
  const answerer = page.getByRole('combobox', { name: 'Who answers' });
  await answerer.selectOption({ label: "The hotel's pages (its guest guide: no server, no model)" });
  await page.getByRole('button', { name: 'Switch' }).click();
  await expect(page.locator('#qa-responder-applied')).toHaveText("Now: the hotel's pages");

  await launcher(page).click();
  // Asked aloud, so the answer is said as well as shown.
  await page.getByRole('button', { name: 'Speak' }).click();
  const reply = conversation(page).locator('.msg.agent').last();
  await expect(reply).toContainText('The garage under the hotel has forty spaces, entrance on Quay Street.', {
    timeout: 10_000,
  });
  const source = page.getByRole('group', { name: 'Suggested actions' }).getByRole('link', {
    name: /Harbor Hotel guest guide/,
  });
  await expect(source).toHaveAttribute('href', `${stack.demoUrl}/guide#parking`);
  // Said as it is shown, without the link.
  await expect
    .poll(async () => (await spoken(page)).map((s) => s.text).join(' '))
    .toContain('The garage under the hotel has forty spaces');
  expect((await spoken(page)).map((s) => s.text).join(' ')).not.toMatch(/guest guide|http/);
  await page.screenshot({ path: 'test-results/widget/knowledge-answer.png' });

  // The link opens the guide at its section.
  const [tab] = await Promise.all([context.waitForEvent('page'), source.click()]);
  await tab.waitForLoadState();
  expect(new URL(tab.url()).hash).toBe('#parking');
  await expect(tab.getByRole('heading', { name: 'Parking' })).toBeInViewport();
  await tab.screenshot({ path: 'test-results/widget/knowledge-source.png' });
  await tab.close();

  // A follow-up is read with the question before it.
  await ask(page, 'How much is it a night?');
  await expect(conversation(page).locator('.msg.agent').last()).toContainText('A night costs 18 euros');

  await ask(page, 'Can I land a helicopter on the roof?');
  await expect(conversation(page).locator('.msg.agent').last()).toContainText("I don't know");
  const person = page.getByRole('group', { name: 'Suggested actions' }).getByRole('button');
  await expect(person).toHaveCount(1);
  await person.click();
  await expect(conversation(page).locator('.msg.agent').last()).toHaveText(
    'A person from the team will answer you here.',
  );
  // A notice that hands over, not an answer: nothing to rate on it.
  await expect(
    conversation(page).locator('.msg.agent').last().getByRole('group', { name: 'Rate this answer' }),
  ).toHaveCount(0);
  await expect(
    conversation(page).locator('.msg.agent').nth(-2).getByRole('group', { name: 'Rate this answer' }),
  ).toHaveCount(1);
  await page.screenshot({ path: 'test-results/widget/knowledge-unknown.png' });
});

test('a guest who chooses Deutsch is welcomed in German and answered from the German guide, a follow-up too', async ({
  page,
  stack,
}) => {
  await page.goto(`${stack.demoUrl}/qa`);
  await page.getByRole('combobox', { name: 'Who answers' }).selectOption({
    label: "The hotel's pages (its guest guide: no server, no model)",
  });
  await page.getByRole('button', { name: 'Switch' }).click();
  await expect(page.locator('#qa-responder-applied')).toHaveText("Now: the hotel's pages");

  await launcher(page).click();
  await expect(conversation(page).locator('.msg.agent').first()).toHaveText(
    // The signed-in guest, by the name the hotel's token gives (README, Variables and guardrails).
    'Hello Maya, this is the Harbor Hotel concierge. How can I help you today?',
  );
  await page.getByRole('combobox', { name: 'Language of the conversation' }).selectOption('de-DE');
  // The widget's words are German now, and so is the agent's welcome.
  const log = page.getByRole('list', { name: 'Unterhaltung' });
  await expect(log.locator('.msg.agent').first()).toHaveText(
    'Hallo Maya, hier ist der Concierge des Harbor Hotels. Wie kann ich Ihnen helfen?',
  );
  const askInGerman = async (question: string) => {
    await page.getByRole('textbox', { name: 'Ihre Nachricht' }).fill(question);
    await page.getByRole('button', { name: 'Senden' }).click();
  };
  await askInGerman('Wo kann ich parken?');
  await expect(log.locator('.msg.agent').last()).toContainText(
    'Die Garage unter dem Hotel hat vierzig Stellplätze, Einfahrt in der Quay Street.',
  );
  const source = page.getByRole('group', { name: 'Vorgeschlagene Aktionen' }).getByRole('link');
  await expect(source).toHaveAttribute('href', `${stack.demoUrl}/guide/de#parking`);
  await askInGerman('Was kostet das?');
  await expect(log.locator('.msg.agent').last()).toContainText('Parken kostet 18 Euro pro Nacht');
  await askInGerman('Wann gibt es Frühstück?');
  await expect(log.locator('.msg.agent').last()).toContainText('Frühstück gibt es von 7 bis 10:30 Uhr im Gartensaal');
  await page.screenshot({ path: 'test-results/widget/knowledge-german.png' });
});

test('a customer makes a knowledge base in the console from a page, a PDF and text, sees what a question finds and why, and gives it to an agent', async ({
  page,
  stack,
}) => {
  test.setTimeout(90_000);
  const errors = consoleErrors(page);
  const { welcomeToken } = stack.newConsoleCustomer('Harbor Hotel owner', 'owner@harbor-knowledge.example');
  await choosePassword(page, `${stack.serviceUrl}/console/#/welcome/${welcomeToken}`);
  await expect(page.getByRole('heading', { name: 'Getting started' })).toBeVisible();

  await nav(page, 'Knowledge').click();
  await expect(page.getByText('No knowledge base yet')).toBeVisible();
  await page.getByLabel('Name').fill('Hotel pages');
  await page.getByRole('button', { name: 'Create' }).click();
  await expect(page.getByRole('heading', { name: 'Hotel pages' })).toBeVisible();
  await expect(page.getByText('No document yet')).toBeVisible();

  // A page, fetched by the service.
  await page.getByLabel('Page URL (HTML, Markdown, text or PDF)').fill(`${stack.demoUrl}/guide`);
  await page.getByRole('button', { name: 'Add document' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Added “Harbor Hotel guest guide”' })).toBeVisible();
  const guide = page.getByRole('row').filter({ hasText: 'Harbor Hotel guest guide' });
  await expect(guide).toContainText('Page (html, fetched every 24 h)');

  // A PDF from disk.
  await page.getByLabel('A file').check();
  await page.getByLabel('File: .txt, .md, .html or .pdf, at most 5 MB').setInputFiles({
    name: 'spa-menu.pdf',
    mimeType: 'application/pdf',
    buffer: pdfOf([['Spa menu', 'A hot stone massage takes 60 minutes and costs 70 euros.']]),
  });
  await page.getByRole('button', { name: 'Add document' }).click();
  await expect(page.getByRole('row').filter({ hasText: 'spa-menu' })).toContainText('File (pdf)');
  // A scan is refused, saying why.
  await page.getByLabel('File: .txt, .md, .html or .pdf, at most 5 MB').setInputFiles({
    name: 'scan.pdf',
    mimeType: 'application/pdf',
    buffer: pdfOf([[]]),
  });
  await page.getByRole('button', { name: 'Add document' }).click();
  await expect(page.getByRole('alert')).toContainText('The PDF holds no text to answer from');

  // What a question finds, and why.
  await page.getByLabel('Question').fill('How much is a massage?');
  await page.getByRole('button', { name: 'Search' }).click();
  const found = page.getByRole('status').filter({ hasText: 'score' });
  await expect(found).toContainText('Found by its words (stemmed).');
  await expect(found.getByRole('listitem').first()).toContainText('spa-menu');
  await expect(found.getByRole('listitem').first()).toContainText('holds massage');
  await expect(found.locator('mark').first()).toHaveText('massage');

  // The guide's passages, and a refresh that finds it unchanged.
  await guide.getByRole('button', { name: /^Show the \d+ passages of Harbor Hotel guest guide$/ }).click();
  await expect(guide.getByText(/^Parking ·/)).toBeVisible();
  await guide.getByRole('button', { name: 'Refresh Harbor Hotel guest guide' }).click();
  await expect(guide).toContainText('fetched');
  await audit(page, 'knowledge-base');

  // The agent page gives an agent the base.
  await nav(page, 'Agents').click();
  await page.getByLabel('Name').fill('Harbor desk');
  await page.getByRole('button', { name: 'Create agent' }).click();
  await expect(page.getByRole('status')).toContainText('Generation succeeded');
  await page.getByRole('link', { name: 'Harbor desk' }).click();
  await page.getByLabel(/^Knowledge base/).selectOption({ label: 'Hotel pages' });
  await expect(page.getByLabel(/^Knowledge base/)).toHaveValue(/[0-9a-f-]{36}/);
  // The one refusal asked for (the scan), and nothing else.
  expect(errors).toEqual(['Failed to load resource: the server responded with a status of 400 (Bad Request)']);
});
