import { describeResourceUri } from '../read/input/uri.ts';

export interface ResourceLinkContent {
  type: 'resource_link';
  uri: string;
  name: string;
  mimeType: string;
}

/**
 * The resource-link content item for a URI the read service returned (the contract's resource-link
 * table). Every such URI is canonical, so a URI without a shape in the table is a bug here, not a
 * caller error.
 */
export function resourceLinkFor(uri: string): ResourceLinkContent {
  const link = describeResourceUri(uri);
  if (link === undefined) throw new Error(`no resource-link shape for a returned URI: ${uri}`);
  return { type: 'resource_link', uri, name: link.name, mimeType: link.mimeType };
}
