// In-page anchors: sections mark themselves with data-anchor="<name>".

/** Scrolls to the element marked data-anchor=<anchor> inside root and flashes it. */
export function scrollToAnchor(root: HTMLElement, anchor: string): boolean {
  const target = Array.from(root.querySelectorAll<HTMLElement>('[data-anchor]')).find(
    (el) => el.dataset.anchor === anchor,
  );
  if (!target) return false;
  target.scrollIntoView({ behavior: 'smooth', block: 'start' });
  target.classList.remove('ks-flash');
  target.getBoundingClientRect(); // forces a reflow, restarting the highlight animation
  target.classList.add('ks-flash');
  return true;
}
