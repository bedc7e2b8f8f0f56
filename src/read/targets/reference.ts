import { findReferenceTopic, REFERENCE_TOPICS } from '../../reference/topics.ts';
import { defineTarget } from '../definition.ts';
import { readError } from '../errors.ts';
import { referenceUri, SHAPES } from '../uri-shapes.ts';

const MARKDOWN = 'text/markdown';

/** The topic `reference` reads when `name` is absent. */
export const DEFAULT_REFERENCE_TOPIC = 'authoring';

/** Built once: the topic list never changes while the process runs. */
const COLLECTION = {
  items: REFERENCE_TOPICS.map((topic) => ({
    name: topic.name,
    uri: referenceUri(topic.name),
    mimeType: MARKDOWN,
    title: topic.title,
    description: topic.description,
  })),
};

/** The gateway's own reference topics: static content, no Dagu call. */
export const referenceTargets = {
  references: defineTarget({
    fields: { required: [], optional: [] },
    uri: { shapes: [SHAPES.references] },
    handle: async () => ({ data: COLLECTION }),
  }),
  reference: defineTarget({
    fields: { required: [], optional: ['name'], defaults: { name: DEFAULT_REFERENCE_TOPIC } },
    uri: { shapes: [SHAPES.reference], targetMode: (fields) => referenceUri(fields.name) },
    handle: async (request) => {
      const { name } = request.fields;
      const topic = findReferenceTopic(name);
      if (topic === undefined) {
        throw readError.notFound(`Reference topic ${JSON.stringify(name)} does not exist.`, {
          target: 'reference',
          uri: referenceUri(name),
          details: { topics: REFERENCE_TOPICS.map((known) => known.name) },
        });
      }
      return { data: { name: topic.name, mimeType: MARKDOWN, text: topic.text } };
    },
  }),
};
