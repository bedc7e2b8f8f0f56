// What V8's `--log-ic` log says about the property accesses of the measured calls: bench:profile's
// PROFILE_IC cell. V8 logs an inline cache when it goes to the runtime: once per new shape while it
// learns, then, at a megamorphic site (state `N`), on each miss of its shared cache of handlers. A site
// that misses on most calls, with a new map each time, reads objects that each got a map of their own
// (bench/RESULTS.md, fifteenth round: a leading spread on Node 20). Lines are comma-separated, V8
// escapes commas inside names:
//   code-creation,<type>,<kind>,<time>,<start>,<size>,<name>[,…]   code that the pcs below fall in
//   <Kind>IC,<pc>,<time>,<line>,<column>,<old state>,<new state>,<map>,<key>,…

export interface IcSite {
  /** The function and script the access is in, as V8 names its code (`get file:///…/client.js:192:23`). */
  code: string;
  line: number;
  column: number;
  kind: string;
  key: string;
  /** Misses at the site while megamorphic. */
  misses: number;
  /** Distinct maps those misses met. */
  maps: number;
}

interface CodeRange {
  start: number;
  end: number;
  name: string;
}

/** The name of the latest code created over `pc` (code can be freed and its range reused). */
function codeAt(codes: readonly CodeRange[], pc: number): string {
  for (let i = codes.length - 1; i >= 0; i--) {
    const code = codes[i]!;
    if (code.start <= pc && pc < code.end) return code.name;
  }
  return '?';
}

/**
 * The megamorphic misses of the log's IC lines that start at or after `from` (a character offset: the
 * measured calls' part of the log), by site, most first. Code created anywhere before them counts.
 */
export function megamorphicSites(log: string, from = 0): IcSite[] {
  const codes: CodeRange[] = [];
  const names = new Map<number, string>();
  // Per site: what names it, its misses, and the maps they met (counted at the end).
  const sites = new Map<
    string,
    { site: Omit<IcSite, 'misses' | 'maps'>; misses: number; maps: Set<string> }
  >();
  let offset = 0;
  for (const line of log.split('\n')) {
    const at = offset;
    offset += line.length + 1;
    const fields = line.split(',');
    if (fields[0] === 'code-creation' && fields.length >= 7) {
      const start = Number.parseInt(fields[4]!, 16);
      codes.push({ start, end: start + Number(fields[5]), name: fields[6]! });
      names.clear();
      continue;
    }
    if (at < from || !fields[0]!.endsWith('IC') || fields.length < 9 || fields[6] !== 'N') continue;
    const pc = Number.parseInt(fields[1]!, 16);
    let code = names.get(pc);
    if (code === undefined) {
      code = codeAt(codes, pc);
      names.set(pc, code);
    }
    const id = `${code}\0${fields[3]}\0${fields[4]}\0${fields[0]}`;
    let counted = sites.get(id);
    if (counted === undefined) {
      const site = {
        code,
        line: Number(fields[3]),
        column: Number(fields[4]),
        kind: fields[0]!,
        key: fields[8]!,
      };
      counted = { site, misses: 0, maps: new Set() };
      sites.set(id, counted);
    }
    counted.misses += 1;
    counted.maps.add(fields[7]!);
  }
  return [...sites.values()]
    .map(({ site, misses, maps }) => ({ ...site, misses, maps: maps.size }))
    .sort((a, b) => b.misses - a.misses);
}

const perThousand = (count: number, calls: number) => ((count * 1000) / calls).toFixed(1);

/** The cell's line: all misses per 1,000 calls, then the sites that missed most, paths cut to `root`. */
export function icLine(sites: readonly IcSite[], calls: number, root: string, top = 3): string {
  const all = sites.reduce((sum, site) => sum + site.misses, 0);
  const shown = sites.slice(0, top).map((site) => {
    const where = site.code.replace('file://', '').replace(`${root}/`, '');
    return `${perThousand(site.misses, calls)} ${site.kind} .${site.key} at ${site.line}:${site.column} in ${where} (${site.maps} maps)`;
  });
  return `megamorphic inline-cache misses per 1,000 calls ${perThousand(all, calls)}${shown.length > 0 ? `, most: ${shown.join('; ')}` : ''}`;
}
