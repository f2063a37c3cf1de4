import { createHmac } from 'node:crypto';
import { identifier, identifierName } from './storage';

/**
 * With a ClickHouse server, each workspace's SQL runs as a ClickHouse user of its own that may
 * read its database and nothing else: if the query guard ever let a foreign table through, the
 * server itself would refuse it. Every service process derives the same password from the
 * service's own password, so processes sharing a server need no shared state to use the user;
 * the user is no easier to reach than the service's own account, which may do far more.
 */

/** How sandbox users are used: `auto` tries and falls back to the service's user, `on` requires them, `off` never. */
export type SandboxUsersMode = 'auto' | 'on' | 'off';

export const sandboxUserName = (database: string): string => `sandbox_${identifierName(database)}`;

/** The user's password: an HMAC of the database's name, hex (so it needs no quoting). */
export function sandboxPassword(secret: string, database: string): string {
  return createHmac('sha256', `event-analytics sandbox users\u0000${secret}`).update(identifierName(database)).digest('hex');
}

const onCluster = (cluster: string) => (cluster ? ` ON CLUSTER ${identifier(cluster)}` : '');

/**
 * Creates the user if needed and (re)sets its password and grant, so that every statement is
 * idempotent and a changed service password reaches the user too.
 */
export function sandboxUserStatements(database: string, password: string, cluster: string): string[] {
  if (!/^[0-9a-f]{64}$/.test(password)) throw new Error('not a derived sandbox password');
  const user = identifier(sandboxUserName(database));
  const credentials = `IDENTIFIED WITH sha256_password BY '${password}'`;
  return [
    `CREATE USER IF NOT EXISTS ${user}${onCluster(cluster)} ${credentials} DEFAULT DATABASE ${identifier(database)}`,
    `ALTER USER ${user}${onCluster(cluster)} ${credentials}`,
    `GRANT${onCluster(cluster)} SELECT ON ${identifier(database)}.* TO ${user}`,
  ];
}

export const dropSandboxUserStatement = (database: string, cluster: string): string =>
  `DROP USER IF EXISTS ${identifier(sandboxUserName(database))}${onCluster(cluster)}`;
