/** Rule sets the service's rule-set tests share. */

/** Every player's skill within 10 of every other's in the match (the highest less the lowest). */
export const closeSkill = {
  name: 'CloseSkill',
  type: 'distance',
  measurements: ['max(flatten(teams[*].players.attributes[skill]))'],
  referenceValue: 'min(flatten(teams[*].players.attributes[skill]))',
  maxDistance: 10,
};

/** 1 against 1 of the same mode, skills within 10. */
export const duel = {
  name: 'duel',
  ruleLanguageVersion: '1.0',
  playerAttributes: [
    { name: 'skill', type: 'number', default: 10 },
    { name: 'mode', type: 'string' },
  ],
  teams: [
    { name: 'red', minPlayers: 1, maxPlayers: 1 },
    { name: 'blue', minPlayers: 1, maxPlayers: 1 },
  ],
  rules: [{ name: 'SameMode', type: 'batchDistance', batchAttribute: 'mode' }, closeSkill],
};
