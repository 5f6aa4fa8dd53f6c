//! The skeleton's hierarchy as the optimiser walks it: a bone's subtree (itself and
//! every descendant, parents first) and its chain (itself up to its root).
//!
//! Both are needed for every bone, and listing them per bone costs memory in the
//! square of the depth: a chain of 16,000 bones held 128 million entries twice over.
//! Here the bones are laid out once in depth-first order, where every subtree is a
//! contiguous run, so a subtree is a slice; a chain is a walk up the parent links.
//! Memory is three words per bone whatever the shape.

/// Depth-first layout of a skeleton whose parents come before their children.
#[derive(Clone, Debug)]
pub struct Hierarchy {
    parents: Vec<Option<usize>>,
    /// Bones in depth-first preorder: each bone, then its subtree.
    order: Vec<usize>,
    /// Where each bone stands in `order`.
    start: Vec<usize>,
    /// Where each bone's subtree ends in `order` (exclusive).
    end: Vec<usize>,
}

impl Hierarchy {
    /// Lays out the skeleton; `parents[b] < b` for every bone that has a parent.
    pub fn new(parents: &[Option<usize>]) -> Hierarchy {
        let n = parents.len();
        // Children as contiguous runs, in increasing bone order (a counting sort).
        let mut child_count = vec![0usize; n + 1];
        for p in parents.iter().flatten() {
            child_count[*p + 1] += 1;
        }
        for i in 0..n {
            child_count[i + 1] += child_count[i];
        }
        let first_child = child_count.clone();
        let mut children = vec![0usize; first_child[n]];
        let mut fill = first_child.clone();
        for (b, p) in parents.iter().enumerate() {
            if let Some(p) = *p {
                children[fill[p]] = b;
                fill[p] += 1;
            }
        }
        // Iterative preorder (a recursive one would overflow the stack on deep chains).
        let mut order = Vec::with_capacity(n);
        let mut start = vec![0usize; n];
        let mut end = vec![0usize; n];
        let mut stack: Vec<(usize, usize)> = Vec::new();
        for root in (0..n).filter(|&b| parents[b].is_none()) {
            start[root] = order.len();
            order.push(root);
            stack.push((root, first_child[root]));
            while let Some(top) = stack.last_mut() {
                let (bone, next) = *top;
                if next < first_child[bone + 1] {
                    top.1 += 1;
                    let child = children[next];
                    start[child] = order.len();
                    order.push(child);
                    stack.push((child, first_child[child]));
                } else {
                    end[bone] = order.len();
                    stack.pop();
                }
            }
        }
        Hierarchy { parents: parents.to_vec(), order, start, end }
    }

    /// The parent of `bone`.
    pub fn parent(&self, bone: usize) -> Option<usize> {
        self.parents[bone]
    }

    /// `bone` and every descendant, each after its parent.
    pub fn subtree(&self, bone: usize) -> &[usize] {
        &self.order[self.start[bone]..self.end[bone]]
    }

    /// `bone`, its parent, and so on up to its root.
    pub fn chain(&self, bone: usize) -> impl Iterator<Item = usize> + '_ {
        std::iter::successors(Some(bone), move |&b| self.parents[b])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subtrees_are_contiguous_and_parents_come_first() {
        // 0 ─┬─ 1 ─── 3
        //    └─ 2 ─── 4 ─── 5      6 (second root) ─── 7
        let parents = [None, Some(0), Some(0), Some(1), Some(2), Some(4), None, Some(6)];
        let h = Hierarchy::new(&parents);
        assert_eq!(h.subtree(0), &[0, 1, 3, 2, 4, 5]);
        assert_eq!(h.subtree(2), &[2, 4, 5]);
        assert_eq!(h.subtree(5), &[5]);
        assert_eq!(h.subtree(6), &[6, 7]);
        assert_eq!(h.chain(5).collect::<Vec<_>>(), vec![5, 4, 2, 0]);
    }

    #[test]
    fn deep_chains_take_linear_memory() {
        let n: usize = 100_000;
        let parents: Vec<Option<usize>> = (0..n).map(|b| b.checked_sub(1)).collect();
        let h = Hierarchy::new(&parents);
        assert_eq!(h.subtree(0).len(), n);
        assert_eq!(h.subtree(n - 1), &[n - 1]);
        assert_eq!(h.chain(n - 1).count(), n);
    }
}
