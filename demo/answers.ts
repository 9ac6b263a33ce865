/** The demo hotel's "AI": a few keyword rules, enough for QA to see real answers come back. */
const RULES: [RegExp, string][] = [
  [/breakfast|morning|eat/i, 'Breakfast is served from 7 to 10:30 in the garden room, on weekends until 11.'],
  [/check.?out|leave|late/i, 'Checkout is at 11. A late checkout until 2 pm is free if you ask at the front desk before 9.'],
  [/check.?in|arrive/i, 'Check-in opens at 3 pm; we keep your luggage if you arrive earlier.'],
  [/wi.?fi|internet|password/i, 'The Wi-Fi network is "Harbor Guest"; the password is on the card in your room.'],
  [/park|car/i, 'Parking is in the garage under the hotel, 18 euros a night; the entrance is on Quay Street.'],
  [/pool|spa|sauna|gym/i, 'The spa and pool are open from 7 to 22 on the top floor; towels are there.'],
  [/taxi|airport|train/i, 'The front desk books taxis around the clock; the airport is about 25 minutes away.'],
  [/hello|hi\b|hey/i, 'Hello! How can I help with your stay?'],
];

export function answerFor(question: string): string {
  for (const [pattern, answer] of RULES) if (pattern.test(question)) return answer;
  return `Good question. I have passed "${question.slice(0, 80)}" on to the front desk; they can also help by phone on 9.`;
}
