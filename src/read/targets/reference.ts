import type { ReadTarget } from '../../core/contract.ts';
import { findReferenceTopic, REFERENCE_TOPICS } from '../../reference/topics.ts';
import { readError } from '../errors.ts';
import type { TargetHandler } from '../handler.ts';
import { DEFAULT_REFERENCE_TOPIC } from '../input/index.ts';
import { referenceUri } from '../uri-shapes.ts';

const MARKDOWN = 'text/markdown';

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
export const referenceHandlers: Partial<Record<ReadTarget, TargetHandler>> = {
  references: async () => ({ data: COLLECTION }),
  reference: async (request) => {
    const name = request.fields.name ?? DEFAULT_REFERENCE_TOPIC;
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
};
