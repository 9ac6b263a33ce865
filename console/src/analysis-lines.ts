/** An analysis field as the agent's spec holds it (README, Tests and analysis). */
export interface AnalysisFieldSpec {
  name: string;
  type: 'string' | 'number' | 'boolean' | 'enum';
  description: string;
  values?: string[];
}

export interface CriterionSpec {
  id: string;
  description: string;
}

const NAME = '[a-z][a-z0-9_]{0,39}';
const FIELD = new RegExp(`^(${NAME})\\s*\\(([^)]+)\\)\\s*:\\s*(.+)$`);
const CRITERION = new RegExp(`^(${NAME})\\s*:\\s*(.+)$`);
const TYPES = ['string', 'number', 'boolean'];

/**
 * Fields one a line, `name (type): what it is`, the type one of string, number, boolean or the
 * values an enum takes (`topic (dining | spa | other): what the visitor asked about`).
 */
export function fieldsOf(text: string): { list: AnalysisFieldSpec[] } | { problem: string } {
  const list: AnalysisFieldSpec[] = [];
  for (const [i, raw] of text.split('\n').entries()) {
    const line = raw.trim();
    if (!line) continue;
    const m = FIELD.exec(line);
    if (!m)
      return {
        problem: `Field line ${i + 1}: write name (type): description, the name in lowercase letters, digits and _`,
      };
    const kind = m[2]!.trim();
    const values = kind.split('|').map((v) => v.trim());
    if (TYPES.includes(kind)) list.push({ name: m[1]!, type: kind as AnalysisFieldSpec['type'], description: m[3]! });
    else if (values.length >= 2 && values.every(Boolean))
      list.push({ name: m[1]!, type: 'enum', description: m[3]!, values });
    else return { problem: `Field line ${i + 1}: the type is string, number, boolean, or values like a | b | c` };
  }
  return { list };
}

export const fieldLines = (fields: readonly AnalysisFieldSpec[] | undefined) =>
  (fields ?? [])
    .map((f) => `${f.name} (${f.type === 'enum' ? (f.values ?? []).join(' | ') : f.type}): ${f.description}`)
    .join('\n');

/** Criteria one a line, `id: what success means`. */
export function criteriaOf(text: string): { list: CriterionSpec[] } | { problem: string } {
  const list: CriterionSpec[] = [];
  for (const [i, raw] of text.split('\n').entries()) {
    const line = raw.trim();
    if (!line) continue;
    const m = CRITERION.exec(line);
    if (!m) return { problem: `Criterion line ${i + 1}: write id: what success means, the id in lowercase and _` };
    list.push({ id: m[1]!, description: m[2]! });
  }
  return { list };
}

export const criteriaLines = (criteria: readonly CriterionSpec[] | undefined) =>
  (criteria ?? []).map((c) => `${c.id}: ${c.description}`).join('\n');
