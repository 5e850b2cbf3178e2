/**
 * Said where a forge issue's reply form and close would be, to a login that may not write to the forge:
 * its writes go out with this machine's forge token, the owner's (the route table's forgeScope).
 */
export function ForgeOwnerNeeded({ store }: { store: string }) {
  return (
    <p class="card muted" data-testid="forge-owner-needed">
      Replying to or closing an issue on {store} writes to the forge with this machine's token, so only its owner (the admin login) can. Your login can read it here, and
      open, reply to and close local issues.
    </p>
  );
}
