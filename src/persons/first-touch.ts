import { EVENT_ORDER_KEY } from '../insights/compile-context';
import type { MigrationTarget } from '../storage/migrations/runner';
import { PAGE_PATH, PAGE_URL, RAW_REFERRER, VISIT_ATTRIBUTES } from '../web-analytics/stats/sessions';
import { FIRST_TOUCH_NAMES, FIRST_TOUCH_VIEW, type FirstTouchName } from './first-touch-names';

const visitAttribute = (name: string) => VISIT_ATTRIBUTES.find(([n]) => n === name)![1];

/**
 * Each first-touch property's expression over the first event's `context` and `properties`: the
 * visits' own expressions (a visit's source, UTM fields, country, browser, OS and device are its
 * first event's), the referrer as sent and its host, the page's path.
 */
const EXPRESSIONS: Record<FirstTouchName, string> = {
  $initial_referrer: RAW_REFERRER,
  $initial_referring_domain: `domain(${RAW_REFERRER})`,
  $initial_source: visitAttribute('source'),
  $initial_utm_source: visitAttribute('utmSource'),
  $initial_utm_medium: visitAttribute('utmMedium'),
  $initial_utm_campaign: visitAttribute('utmCampaign'),
  $initial_pathname: PAGE_PATH,
  $initial_country: visitAttribute('country'),
  $initial_browser: visitAttribute('browser'),
  $initial_os: visitAttribute('os'),
  $initial_device: visitAttribute('device'),
};

/**
 * The view of each person's first touch: `personId` and the `$initial_*` columns, from the
 * person's first event (time, then arrival, then uuid) of `events_with_persons`, so a link made
 * later (an anonymous first visit, then sign-up) counts. Computed when read, one argMin a column:
 * a read of one column leaves the others out (argMin of the whole context took 3× as long,
 * docs/architecture.md); `pageUrl` and `rawReferrer` are the columns the visits' expressions read.
 * Made again at every start (CREATE OR REPLACE), it follows the code's
 * expressions rather than a migration's text.
 */
export function firstTouchView({ db, onCluster }: MigrationTarget): string {
  const columns = FIRST_TOUCH_NAMES.map((name) => `argMin(${EXPRESSIONS[name]}, eventOrder) AS \`${name}\``).join(',\n      ');
  return `CREATE OR REPLACE VIEW ${db}.${FIRST_TOUCH_VIEW} ${onCluster} AS
    SELECT personId,
      ${columns}
    FROM (SELECT personId, context, properties, ${PAGE_PATH}, ${PAGE_URL} AS pageUrl, ${RAW_REFERRER} AS rawReferrer, ${EVENT_ORDER_KEY} AS eventOrder FROM ${db}.events_with_persons WHERE personId != '')
    GROUP BY personId`;
}
