/**
 * Events of automated clients: those the enrichment marks with `context.bot` (a crawler, a
 * monitor or a headless browser, by isbot's list: src/web-analytics/user-agent.ts). They stay
 * stored and SQL sees them; web analytics leave them out always, and insights, persons and
 * cohorts unless asked for them (`includeBots`). The condition is one constant read of `context`,
 * which the fast-reads layer stores as a column once statements make it (src/properties).
 */
export const HUMAN_EVENTS = "NOT JSONExtractBool(context, 'bot')";

/** The condition on events that `includeBots` leaves: every event, or people's only. */
export function botCondition(includeBots: boolean | undefined): string {
  return includeBots ? '1' : HUMAN_EVENTS;
}

/**
 * The condition on persons (rows with a `personId`) that `includeBots` leaves: every person, or
 * those with an event of people's (a person all of whose events are a bot's is the bot).
 */
export function personBotCondition(includeBots: boolean | undefined): string {
  return includeBots ? '1' : `personId IN (SELECT personId FROM events_with_persons WHERE ${HUMAN_EVENTS})`;
}
