import { resourceLinkFor as describeLink } from '../read/input/index.ts';

export interface ResourceLinkContent {
  type: 'resource_link';
  uri: string;
  name: string;
  mimeType: string;
}

/**
 * The resource-link content item for a URI the read service returned. Every such URI is canonical, so a
 * URI without a shape in the contract's link table is a bug here, not a caller error.
 */
export function resourceLinkFor(uri: string): ResourceLinkContent {
  const link = describeLink(uri);
  if (link === undefined) throw new Error(`no resource-link shape for a returned URI: ${uri}`);
  return link;
}
