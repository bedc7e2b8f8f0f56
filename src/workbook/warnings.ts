/** Per-sheet warnings: at most 20 are listed, then one `<sheet>: N more warnings` line. */

export const WARNINGS_PER_SHEET = 20;

export class SheetWarnings {
  private readonly listed: string[] = [];
  private more = 0;
  private failure: string | undefined;

  constructor(readonly sheet: string) {}

  /** `cell` (an address such as `C1`) makes the prefix `Sheet!C1`, otherwise it is `Sheet`. */
  add(message: string, cell?: string): void {
    if (this.listed.length < WARNINGS_PER_SHEET) {
      this.listed.push(`${cell === undefined ? this.sheet : `${this.sheet}!${cell}`}: ${message}`);
    } else {
      this.more++;
    }
  }

  /**
   * Counts `n` more warnings without their text. Only for warnings that come after at least
   * WARNINGS_PER_SHEET listed ones, which therefore only count towards `N more warnings`.
   */
  addUnlisted(n: number): void {
    this.more += n;
  }

  /** The error that stopped the sheet part-way: always listed, whatever the cap. */
  fail(message: string): void {
    this.failure ??= `${this.sheet}: ${message}`;
  }

  list(): string[] {
    const out = [...this.listed];
    if (this.more > 0) out.push(`${this.sheet}: ${this.more} more warnings`);
    if (this.failure !== undefined) out.push(this.failure);
    return out;
  }
}
