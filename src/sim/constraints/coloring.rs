//! Graph colouring of the constraints for the parallel solver.
//!
//! Gauss–Seidel (§3.1 lines (9)–(11)) projects constraints one after another. Two constraints that share no
//! particle commute, so if the constraints are split into colours whose members touch disjoint particles, a
//! colour can be projected by several threads at once and the result is the same as projecting it in any
//! order. The solver then sweeps the colours in order: Gauss–Seidel between colours, exact parallelism inside
//! one — deterministic, and identical for every thread count.
//!
//! First-fit greedy colouring over the constraints in their mesh order works for arbitrary meshes; on a grid
//! it finds the few colours a hand-made grid colouring would (about 6–8 for edges, 10–14 for bending quads).
//! The constraint arrays are then permuted so each colour is one contiguous slice, in particle order (by its
//! lowest particle): the order inside a colour does not change the result, but the chunks the threads share
//! are cut from it, and tearing appends constraints at the end of the arrays — left in array order, a torn
//! cloth's chunks would each touch particles all over the cloth and both threads would pull the same cache
//! lines back and forth. Colouring runs when a cloth is
//! built and when tearing changes its topology, never per frame.

/// Colours of constraints over `vertex_count` particles: `order[k]` is the constraint placed at position k
/// (grouped by colour, by lowest particle inside a colour), and colour c occupies positions `offsets[c]..offsets[c+1]`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Coloring {
    /// `order[k]` is the constraint placed at position k.
    pub order: Vec<u32>,
    /// Colour c occupies positions `offsets[c]..offsets[c + 1]`.
    pub offsets: Vec<u32>,
}

/// First-fit greedy colouring: each constraint gets the lowest colour none of its particles has yet.
/// Indices at or beyond `vertex_count` are ignored (the topology is validated before this).
pub fn color<const N: usize>(constraints: &[[u32; N]], vertex_count: usize) -> Coloring {
    // per particle, a bit set of the colours already touching it; `words` u64 per particle, grown on demand
    let mut words = 1;
    loop {
        if let Some(colors) = try_color(constraints, vertex_count, words) {
            return group(&colors, &by_lowest_particle(constraints, vertex_count));
        }
        words *= 2;
    }
}

/// Colours with at most 64·`words` colours, or `None` if more are needed.
fn try_color<const N: usize>(constraints: &[[u32; N]], vertex_count: usize, words: usize) -> Option<Vec<u32>> {
    let mut used = vec![0u64; vertex_count * words];
    let mut colors = Vec::with_capacity(constraints.len());
    let mut taken = vec![0u64; words];
    for c in constraints {
        taken.fill(0);
        for &i in c.iter().filter(|&&i| (i as usize) < vertex_count) {
            for (t, u) in taken.iter_mut().zip(&used[i as usize * words..][..words]) {
                *t |= *u;
            }
        }
        let (word, bit) =
            taken.iter().enumerate().find_map(|(k, t)| (*t != u64::MAX).then(|| (k, t.trailing_ones())))?;
        for &i in c.iter().filter(|&&i| (i as usize) < vertex_count) {
            used[i as usize * words + word] |= 1 << bit;
        }
        colors.push(word as u32 * 64 + bit);
    }
    Some(colors)
}

/// The constraint indices ordered by their lowest particle (ties by index): a counting sort, linear in the
/// constraints and particles. Each colour keeps this order (the threads sharing a colour's chunks should each
/// keep to their own part of the cloth; tearing appends constraints at the end of the arrays).
fn by_lowest_particle<const N: usize>(constraints: &[[u32; N]], vertex_count: usize) -> Vec<u32> {
    let lowest = |c: &[u32; N]| c.iter().map(|&i| (i as usize).min(vertex_count)).min().unwrap_or(vertex_count);
    let mut start = vec![0u32; vertex_count + 2];
    for c in constraints {
        start[lowest(c) + 1] += 1;
    }
    for i in 0..=vertex_count {
        start[i + 1] += start[i];
    }
    let mut order = vec![0u32; constraints.len()];
    for (k, c) in constraints.iter().enumerate() {
        let slot = &mut start[lowest(c)];
        order[*slot as usize] = k as u32;
        *slot += 1;
    }
    order
}

/// Groups the constraint indices of `sequence` by colour, each colour in the order of `sequence`.
fn group(colors: &[u32], sequence: &[u32]) -> Coloring {
    let count = colors.iter().max().map_or(0, |&c| c as usize + 1);
    let mut offsets = vec![0u32; count + 1];
    for &c in colors {
        offsets[c as usize + 1] += 1;
    }
    for c in 0..count {
        offsets[c + 1] += offsets[c];
    }
    let mut next = offsets.clone();
    let mut order = vec![0u32; colors.len()];
    for &k in sequence {
        let c = colors[k as usize] as usize;
        order[next[c] as usize] = k;
        next[c] += 1;
    }
    Coloring { order, offsets }
}

/// Reorders `items` so that position k holds the old `items[order[k]]`.
pub fn permute<T: Copy>(items: &mut Vec<T>, order: &[u32]) {
    if items.len() == order.len() {
        *items = order.iter().map(|&k| items[k as usize]).collect();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::mesh::topology::{edges_and_bend_quads, grid};

    /// Every colour's constraints touch pairwise disjoint particles, and the order is a permutation.
    fn assert_valid<const N: usize>(constraints: &[[u32; N]], vertex_count: usize, coloring: &Coloring) {
        let mut seen = vec![false; constraints.len()];
        for &k in &coloring.order {
            assert!(!std::mem::replace(&mut seen[k as usize], true), "constraint {k} placed twice");
        }
        assert!(seen.iter().all(|&s| s));
        for range in coloring.offsets.windows(2) {
            let mut owner = vec![false; vertex_count];
            for &k in &coloring.order[range[0] as usize..range[1] as usize] {
                for &i in &constraints[k as usize] {
                    assert!(!std::mem::replace(&mut owner[i as usize], true), "particle {i} twice in one colour");
                }
            }
        }
    }

    #[test]
    fn grid_edges_and_quads_get_few_disjoint_colours() {
        let mesh = grid(40, 30, 1.0, 1.0).unwrap();
        let (positions, triangles) = (mesh.positions, mesh.triangles);
        let (edges, quads) = edges_and_bend_quads(&triangles).unwrap();
        let edge_colors = color(&edges, positions.len());
        let quad_colors = color(&quads, positions.len());
        assert_valid(&edges, positions.len(), &edge_colors);
        assert_valid(&quads, positions.len(), &quad_colors);
        let (ne, nq) = (edge_colors.offsets.len() - 1, quad_colors.offsets.len() - 1);
        assert!((6..=10).contains(&ne), "{ne} edge colours");
        assert!((8..=20).contains(&nq), "{nq} quad colours");
    }

    #[test]
    fn each_colour_is_in_order_of_lowest_particle_then_index() {
        // a torn-looking constraint list: a grid's quads, then some appended out of order
        let mesh = grid(12, 9, 1.0, 1.0).unwrap();
        let (_, mut quads) = edges_and_bend_quads(&mesh.triangles).unwrap();
        let n = mesh.positions.len() as u32;
        quads.extend((0..40).map(|i| [(i * 7) % n, (i * 13 + 5) % n, n + i, n + 40 + i]));
        let coloring = color(&quads, (n + 80) as usize);
        assert_valid(&quads, (n + 80) as usize, &coloring);
        for range in coloring.offsets.windows(2) {
            let colour = &coloring.order[range[0] as usize..range[1] as usize];
            let key = |&k: &u32| (quads[k as usize].iter().min().copied(), k);
            assert!(colour.windows(2).all(|pair| key(&pair[0]) < key(&pair[1])), "{colour:?}");
        }
    }

    #[test]
    fn a_fan_needs_more_than_64_colours_and_gets_them() {
        // 100 edges all sharing vertex 0: every edge needs its own colour
        let edges: Vec<[u32; 2]> = (1..=100).map(|i| [0, i]).collect();
        let coloring = color(&edges, 101);
        assert_eq!(coloring.offsets.len() - 1, 100);
        assert_valid(&edges, 101, &coloring);
    }

    #[test]
    fn permute_moves_parallel_arrays_together() {
        let mut a = vec![10, 11, 12, 13];
        permute(&mut a, &[2, 0, 3, 1]);
        assert_eq!(a, [12, 10, 13, 11]);
    }
}
