/** Statements of the SQL cookbook's kinds over the benchmark's events, for the benchmarks that time SQL. */
export const STATEMENTS: Array<[string, string]> = [
  ['count of one event', "SELECT count() AS n FROM events WHERE event = 'purchase'"],
  ['JSONExtract comparison', "SELECT count() AS n FROM events WHERE event = 'purchase' AND JSONExtract(properties, 'amount', 'Float64') > 250"],
  [
    'LEFT JOIN with identify rows on userId',
    `SELECT e.event, JSONExtractString(i.traits, 'plan') AS plan, count() AS n FROM events AS e
     LEFT JOIN (SELECT userId, any(traits) AS traits FROM events WHERE type = 'identify' GROUP BY userId) AS i ON e.userId = i.userId
     WHERE e.type = 'track' GROUP BY e.event, plan ORDER BY n DESC LIMIT 20`,
  ],
  ['daily active users', 'SELECT toDate(timestamp) AS day, uniqExact(userId) AS users FROM events GROUP BY day ORDER BY day'],
];
