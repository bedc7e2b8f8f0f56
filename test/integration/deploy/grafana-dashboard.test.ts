// The Grafana dashboard and its provisioning hold together: panels laid out without overlap, unique
// ids, every query on the dashboard's data-source variable, every panel the operator needs present,
// the provisioning files pointing where docker-compose.yml mounts the dashboard and Prometheus, and
// the trace link: the call-latency panels ask for exemplars, whose trace id label (the gateway's own,
// src/metrics/exemplars.ts) the Prometheus data source links to the Jaeger data source.
// (No Grafana runs here: Debian has no package. The queries themselves run on a real Prometheus in
// observability.test.ts.)
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EXEMPLAR_TRACE_ID_LABEL } from '../../../src/metrics/exemplars.ts';
import { readRepoFile, readRepoYaml } from '../../support/deploy-tools.ts';

/** Grafana's data-source variable, as the dashboard writes it (a literal, not a JS template). */
const DATASOURCE_VARIABLE = ['$', '{datasource}'].join('');

interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: { x: number; y: number; w: number; h: number };
  datasource?: { type: string; uid: string };
  targets?: Array<{ refId: string; expr: string; exemplar?: boolean; datasource?: { uid: string } }>;
}
const dashboard = JSON.parse(readRepoFile('deploy', 'grafana', 'dashboards', 'dagu-mcp-gateway.json')) as {
  uid: string;
  panels: Panel[];
  templating: { list: Array<{ name: string; type: string }> };
};
const panels = dashboard.panels.filter((panel) => panel.type !== 'row');

test('ids are unique and no two panels overlap on the 24-column grid', () => {
  const ids = dashboard.panels.map((panel) => panel.id);
  assert.equal(new Set(ids).size, ids.length);
  const cells = new Map<string, string>();
  for (const panel of dashboard.panels) {
    const { x, y, w, h } = panel.gridPos;
    assert.ok(x >= 0 && w > 0 && x + w <= 24, `${panel.title}: x ${x} w ${w}`);
    for (let row = y; row < y + h; row++) {
      for (let column = x; column < x + w; column++) {
        const key = `${column},${row}`;
        assert.equal(cells.get(key), undefined, `${panel.title} overlaps ${cells.get(key)}`);
        cells.set(key, panel.title);
      }
    }
  }
});

test('no row and no panel is there twice: titles are unique, and so are the queries of a panel', () => {
  const rows = dashboard.panels.filter((panel) => panel.type === 'row').map((row) => row.title);
  assert.deepEqual(
    rows.filter((title, index) => rows.indexOf(title) !== index),
    [],
    'rows shown twice',
  );
  const titles = panels.map((panel) => panel.title);
  assert.deepEqual(
    titles.filter((title, index) => titles.indexOf(title) !== index),
    [],
    'panels shown twice',
  );
  // The same queries under another title are the same panel again.
  const queries = panels.map((panel) => JSON.stringify((panel.targets ?? []).map((target) => target.expr)));
  const repeated = panels.filter((_, index) => queries.indexOf(queries[index]!) !== index);
  assert.deepEqual(
    repeated.map((panel) => panel.title),
    [],
    "panels repeating another panel's queries",
  );
});

test('every query runs on the $datasource variable and filters on $job', () => {
  assert.deepEqual(
    dashboard.templating.list.map((variable) => [variable.name, variable.type]),
    [
      ['datasource', 'datasource'],
      ['job', 'query'],
    ],
  );
  for (const panel of panels) {
    assert.equal(panel.datasource?.uid, DATASOURCE_VARIABLE, panel.title);
    assert.ok((panel.targets ?? []).length > 0, `${panel.title} has no query`);
    const refIds = (panel.targets ?? []).map((target) => target.refId);
    assert.equal(new Set(refIds).size, refIds.length, panel.title);
    for (const target of panel.targets ?? []) {
      assert.equal(target.datasource?.uid, DATASOURCE_VARIABLE, panel.title);
      assert.match(target.expr, /job=~"\$job"/, `${panel.title}: ${target.expr}`);
    }
  }
});

test('the panels the operator needs are there', () => {
  const titles = panels.map((panel) => panel.title);
  for (const needed of [
    'Calls/s by target',
    'Errors/s by code',
    'Errors/s by target and code',
    'Call latency percentiles',
    'Dagu latency p99 by route',
    'Rate-limited calls/s',
    'Authentication failures/s',
    'In-flight calls by instance',
  ]) {
    assert.ok(titles.includes(needed), `panel ${needed}`);
  }
});

test('provisioning points at the Prometheus service and the folder compose mounts the dashboard in', () => {
  const datasources = readRepoYaml<{ datasources: Array<{ type: string; url: string; isDefault: boolean }> }>(
    'deploy',
    'grafana',
    'provisioning',
    'datasources',
    'prometheus.yml',
  );
  assert.equal(datasources.datasources.length, 1);
  assert.equal(datasources.datasources[0]?.type, 'prometheus');
  assert.equal(datasources.datasources[0]?.isDefault, true);
  const providers = readRepoYaml<{ providers: Array<{ type: string; options: { path: string } }> }>(
    'deploy',
    'grafana',
    'provisioning',
    'dashboards',
    'dagu-mcp-gateway.yml',
  );
  const compose = readRepoYaml<{ services: { grafana: { volumes: string[] } } }>('docker-compose.yml');
  const mounted = compose.services.grafana.volumes.find((volume) =>
    volume.startsWith('./deploy/grafana/dashboards:'),
  );
  assert.equal(mounted?.split(':')[1], providers.providers[0]?.options.path);
  assert.ok(
    compose.services.grafana.volumes.includes('./deploy/grafana/provisioning:/etc/grafana/provisioning:ro'),
    'provisioning is mounted where Grafana reads it',
  );
});

interface Datasource {
  name: string;
  uid: string;
  type: string;
  url: string;
  jsonData?: { exemplarTraceIdDestinations?: Array<{ name: string; datasourceUid?: string; url?: string }> };
}
const datasourcesOf = (file: string) =>
  readRepoYaml<{ datasources: Datasource[] }>('deploy', 'grafana', 'provisioning', 'datasources', file)
    .datasources;

test('the call-latency panels show exemplars, and an exemplar opens its trace in Jaeger', () => {
  // Every time series over the call-duration histogram's buckets asks Prometheus for its exemplars.
  const latency = panels.filter(
    (panel) =>
      panel.type === 'timeseries' &&
      (panel.targets ?? []).some((target) =>
        target.expr.includes('mcp_server_operation_duration_seconds_bucket'),
      ),
  );
  assert.deepEqual(
    latency.map((panel) => panel.title),
    ['Call latency percentiles', 'Call latency p99 by target'],
  );
  for (const panel of latency) {
    for (const target of panel.targets ?? [])
      assert.equal(target.exemplar, true, `${panel.title} ${target.refId}`);
  }
  // The Prometheus data source turns the exemplar label the gateway writes into a link to Jaeger.
  const [prometheus] = datasourcesOf('prometheus.yml');
  const jaeger = datasourcesOf('jaeger.yml');
  assert.equal(jaeger.length, 1);
  assert.equal(jaeger[0]?.type, 'jaeger');
  assert.deepEqual(prometheus?.jsonData?.exemplarTraceIdDestinations, [
    { name: EXEMPLAR_TRACE_ID_LABEL, datasourceUid: jaeger[0]?.uid },
  ]);
  // Jaeger's query API, where the compose stack's Jaeger serves it.
  const compose = readRepoYaml<{ services: { jaeger: { volumes: string[] } } }>('docker-compose.yml');
  const configFile = compose.services.jaeger.volumes[0]?.split(':')[0]?.replace(/^\.\//, '') ?? '';
  const config = readRepoYaml<{ extensions: { jaeger_query: { http: { endpoint: string } } } }>(
    ...configFile.split('/'),
  );
  const queryPort = /:(\d+)\}?$/.exec(config.extensions.jaeger_query.http.endpoint)?.[1];
  assert.equal(jaeger[0]?.url, `http://jaeger:${queryPort}`);
});
