import { audit, consoleErrors, nav, PASSWORD } from './console-kit.js';
import { ask, conversation, expect, openWidget, test } from './fixtures.js';

/** README, A person in the conversation, as the hotel's reception and its guest meet it: two pages, one console and one widget. */
test('the inbox: a guest asks for a person, reception is told live, takes over, answers by name, and releases to the agent', async ({
  page,
  context,
  stack,
}) => {
  test.setTimeout(90_000);
  const reception = await context.newPage();
  const errors = consoleErrors(reception);
  // Counts the chime's tones: browsers allow them only after the person's first click.
  const countTones = () => {
    const w = window as unknown as { __tones: number };
    w.__tones = 0;
    const create = AudioContext.prototype.createOscillator;
    AudioContext.prototype.createOscillator = function (this: AudioContext) {
      w.__tones++;
      return create.call(this);
    };
  };
  const tones = (p: typeof reception) => p.evaluate(() => (window as unknown as { __tones: number }).__tones);
  await reception.addInitScript(countTones);
  await reception.goto(`${stack.serviceUrl}/console/#/welcome/${stack.receptionWelcome}`);
  await reception.getByLabel('Password (at least 12 characters)').fill(PASSWORD);
  await reception.getByLabel('The same password again').fill(PASSWORD);
  await reception.getByRole('button', { name: 'Set password and sign in' }).click();
  await nav(reception, 'Inbox').click();
  await expect(reception.getByRole('heading', { name: 'Inbox' })).toBeVisible();
  // A second console tab of the same person, never clicked: it shows the notice but stays silent.
  const untouched = await context.newPage();
  await untouched.addInitScript(countTones);
  await untouched.goto(`${stack.serviceUrl}/console/#/inbox`);
  await expect(untouched.getByRole('heading', { name: 'Inbox' })).toBeVisible();

  // The guest, on the hotel's site.
  await openWidget(page, stack);
  await ask(page, 'Can I talk to a person please?');
  await expect(conversation(page).getByText('I have asked reception to join this conversation')).toBeVisible();

  // Reception hears and sees it at once, wherever it is in the console; nobody reloaded anything.
  const notice = reception
    .getByRole('alert')
    .filter({ hasText: 'A visitor needs a person: The guest asked for a person.' });
  await expect(notice).toBeVisible();
  expect(await tones(reception)).toBeGreaterThan(0);
  await expect(untouched.getByRole('alert').filter({ hasText: 'A visitor needs a person' })).toBeVisible();
  expect(await tones(untouched)).toBe(0);
  await untouched.close();
  const open = reception.getByRole('navigation', { name: 'Open conversations' });
  await expect(open.getByRole('link').first()).toContainText('needs a person');
  await notice.getByRole('link', { name: 'Open it in the inbox' }).click();
  const transcript = reception.getByRole('log', { name: 'Transcript' });
  await expect(transcript).toContainText('Visitor (en-US): Can I talk to a person please?');
  await expect(transcript).toContainText('Agent: Of course: I have asked reception to join this conversation.');
  await expect(reception.getByText('The agent handed it over: The guest asked for a person')).toBeVisible();
  await audit(reception, 'inbox needing a person');

  await reception.getByLabel('Your name, as visitors see it').fill('Maria');
  await reception.getByRole('button', { name: 'Take over' }).click();
  await expect(reception.getByText('Maria handles this conversation.')).toBeVisible();
  await expect(notice).toHaveCount(0);
  await expect(conversation(page).getByText('Maria joined the conversation.')).toBeVisible();

  // While Maria handles it, the guest's question waits for her: the hotel's hook is not called.
  await ask(page, 'Is the spa open late tonight?');
  // The guest is told who is answering: Maria, not the agent.
  await expect(conversation(page).getByText('Maria is writing')).toBeVisible();
  await expect(page.getByText('is thinking')).toHaveCount(0);
  const answer = reception.getByLabel('Answer “Is the spa open late tonight?”');
  await expect(answer).toBeVisible();
  expect(await stack.hookCalls('Is the spa open late tonight?')).toBe(0);
  await answer.fill('Until 10 pm tonight, and I have booked you a massage at 8.');
  await reception.getByRole('button', { name: 'Send answer' }).click();
  const fromMaria = conversation(page)
    .getByRole('listitem')
    .filter({ hasText: 'Until 10 pm tonight, and I have booked you a massage at 8.' });
  await expect(fromMaria).toContainText('Maria');
  await expect(transcript).toContainText('Maria: Until 10 pm tonight');

  await reception.getByLabel('Write to the visitor').fill('Enjoy your evening!');
  await reception.getByRole('button', { name: 'Send message' }).click();
  await expect(conversation(page).getByRole('listitem').filter({ hasText: 'Enjoy your evening!' })).toContainText(
    'Maria',
  );
  await audit(reception, 'inbox handled by a person');

  await reception.getByRole('button', { name: 'Release to the agent' }).click();
  await expect(reception.getByText('The agent handles this conversation.')).toBeVisible();
  await expect(conversation(page).getByText('Maria left the conversation.')).toBeVisible();
  await ask(page, 'And breakfast tomorrow?');
  await expect(conversation(page).getByText('Breakfast is served from 7 to 10:30')).toBeVisible();
  expect(await stack.hookCalls('And breakfast tomorrow?')).toBe(1);
  await expect(transcript).toContainText('Agent: Breakfast is served from 7 to 10:30');
  expect(errors).toEqual([]);
  await reception.close();
});

test('the front desk lands on the Inbox once the hotel is live: the last words on each card, a request ageing, the filters, and closing a conversation thanks the guest', async ({
  page,
  context,
  stack,
}) => {
  test.setTimeout(90_000);
  await openWidget(page, stack);
  await ask(page, 'Can I speak to someone at reception?');
  await expect(conversation(page).getByText('I have asked reception to join this conversation')).toBeVisible();

  const reception = await context.newPage();
  const errors = consoleErrors(reception);
  await reception.goto(`${stack.serviceUrl}/console/#/welcome/${stack.welcomeAgain('reception@harbor.example')}`);
  await reception.getByLabel('Password (at least 12 characters)').fill(PASSWORD);
  await reception.getByLabel('The same password again').fill(PASSWORD);
  await reception.getByRole('button', { name: 'Set password and sign in' }).click();
  // Not the developer's checklist: the hotel is live, so the console opens on the Inbox.
  await expect(reception.getByRole('heading', { name: 'Inbox' })).toBeVisible();

  stack.ageRequestsForPerson(6);
  // Told once, in the guest's language, that nobody is free yet (runtime_config.person_wait_notice_s, 300 s).
  await expect(conversation(page).getByText(/Nobody from the team is free yet/)).toBeVisible({ timeout: 10_000 });
  await reception.reload();
  const open = reception.getByRole('navigation', { name: 'Open conversations' });
  // The only request nobody has taken: this guest's.
  const card = open.getByRole('link').filter({ hasText: /needs a person, waiting [67] min/ });
  await expect(card).toContainText('Agent: Of course: I have asked reception to join this conversation.');
  await expect(card.locator('xpath=..')).toHaveClass(/wait-late/);
  await audit(reception, 'inbox with a late request');
  await reception.screenshot({ path: 'test-results/console/inbox-ageing.png', fullPage: true });

  await reception.getByRole('button', { name: 'Waiting for a person' }).click();
  const waiting = reception.getByRole('navigation', { name: 'Waiting for a person conversations' });
  await expect(waiting.getByRole('link').filter({ hasText: /waiting [67] min/ })).toBeVisible();
  await reception.getByRole('button', { name: 'Open', exact: true }).click();
  await card.click();
  const id = /#\/inbox\/([0-9a-f-]+)/.exec(reception.url())![1]!;
  await reception.getByRole('button', { name: 'Close the conversation' }).click();
  await reception.getByRole('button', { name: 'Close it' }).click();
  await expect(conversation(page).page().getByRole('status')).toHaveText(
    'The team closed this conversation. Thank you for your visit!',
  );
  await expect(page.getByRole('button', { name: 'Start a new conversation' })).toBeVisible();
  await reception.getByRole('button', { name: 'Ended' }).click();
  const ended = reception.getByRole('navigation', { name: 'Ended conversations' });
  await expect(ended.locator(`a[href="#/inbox/${id}"]`)).toContainText('Agent: Of course');
  await audit(reception, 'inbox, ended');
  expect(errors).toEqual([]);
  await reception.close();
});
