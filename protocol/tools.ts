/**
 * A model agent's tool names (README, An agent without a server), one rule for the service that
 * refuses them and the console that explains them before a publish would.
 */

/** The tools the service gives every model agent: a customer's tool may not take their names. */
export const BUILT_IN_TOOLS = ['hand_off_to_person', 'end_conversation'] as const;

export const isBuiltInTool = (name: string): boolean => (BUILT_IN_TOOLS as readonly string[]).includes(name);

/** A tool's name, as models take function names. */
export const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
export const TOOL_NAME_RULE = 'must be 1 to 64 of a-z, A-Z, 0-9, _ and -';

/** A client action's name: a tool the visitor's page runs, or a reply's `client` action. */
export const ACTION_NAME = /^[a-z0-9_.-]{1,64}$/;
export const ACTION_NAME_RULE = 'must be 1 to 64 of a-z, 0-9, _ . -';
