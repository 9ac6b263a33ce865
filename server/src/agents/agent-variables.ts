import { isKnownVariable, SERVICE_VARIABLES, templatedTexts, variablesIn } from '#protocol/templates';

/** A spec field's problem, by its path. */
export interface SpecProblem {
  path: string[];
  message: string;
}

/** A tool's URL up to its first variable must name its scheme and host whole: a value cannot send a call elsewhere. */
const FIXED_ORIGIN = /^https?:\/\/[^/?#{}]+[/?#]/;

/**
 * The variables of a spec the service could not fill (README, Variables and guardrails): each
 * `{{…}}` that is not a variable, each name it does not know (a typo would stay empty forever),
 * and a tool URL with a variable before its path.
 */
export function variableProblems(spec: Record<string, unknown>): SpecProblem[] {
  return templatedTexts(spec).flatMap(({ path, text, url }) => {
    const { variables, malformed } = variablesIn(text);
    const at = path.split('.');
    const problems: SpecProblem[] = malformed.map((written) => ({
      path: at,
      message: `${written} is not a variable: write {{name}} or {{name|default}}`,
    }));
    for (const { name } of variables)
      if (!isKnownVariable(name))
        problems.push({
          path: at,
          message: `{{${name}}} is not a variable the service knows: use ctx.KEY, page.context.KEY or one of ${SERVICE_VARIABLES.join(', ')}`,
        });
    if (url && variables.length && !FIXED_ORIGIN.test(text.slice(0, text.indexOf('{{'))))
      problems.push({ path: at, message: "a variable may stand only in the URL's path or query, after its host" });
    return problems;
  });
}
