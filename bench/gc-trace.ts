// What V8's `--trace-gc-nvp` lines (one per collection) say about a stretch of a process's output:
// bench:profile's PROFILE_GC cell. A scavenge line carries `promoted=<bytes>`: what the young
// generation moved to the old one, which the old generation's concurrent marking and sweeping then pay
// for. A mark-compact line says `gc=mc`.

export interface GcTotals {
  scavenges: number;
  markCompacts: number;
  promotedBytes: number;
}

const SCAVENGE = /\bgc=s\b.*?\bpromoted=(\d+)/;
const MARK_COMPACT = /\bgc=mc\b/;

export function gcTotals(text: string): GcTotals {
  const totals: GcTotals = { scavenges: 0, markCompacts: 0, promotedBytes: 0 };
  for (const line of text.split('\n')) {
    const scavenge = SCAVENGE.exec(line);
    if (scavenge !== null) {
      totals.scavenges += 1;
      totals.promotedBytes += Number(scavenge[1]);
    } else if (MARK_COMPACT.test(line)) {
      totals.markCompacts += 1;
    }
  }
  return totals;
}

export const gcLine = (totals: GcTotals, calls: number) =>
  `promoted ${Math.round(totals.promotedBytes / calls).toLocaleString('en-US')} B per call; ` +
  `per 1,000 calls ${((totals.scavenges * 1000) / calls).toFixed(1)} scavenges, ` +
  `${((totals.markCompacts * 1000) / calls).toFixed(2)} mark-compacts`;
