//! The colliders' edges against the cloth's triangles (§4.2, `params.collider_edges`): where a box's corners
//! and edges or a table's rim poke between the cloth's vertices, no collider edge ends through a cloth triangle
//! after 600 frames; with the switch off the same scenes end pierced.

use drape::headless;
use drape::scene::preset;

/// `collider_piercings` of `name` after 600 frames with the colliders' edges on and off.
fn piercings(name: &str) -> [usize; 2] {
    [true, false].map(|on| {
        let mut desc = preset::load(name).expect("a shipped preset");
        desc.params.collider_edges = on;
        headless::run(desc, 600).expect("the preset runs").collider_piercings
    })
}

#[test]
fn box_corners_in_the_pile_stay_under_the_sheet() {
    let [on, off] = piercings("pile");
    assert_eq!(on, 0, "box edges through the sheet with the colliders' edges on");
    assert!(off > 0, "the scene tests nothing if the vertex contacts alone keep the corners under ({off})");
}

#[test]
fn the_table_rim_stays_under_the_tablecloth() {
    let [on, off] = piercings("tablecloth");
    assert_eq!(on, 0, "table edges through the cloth with the colliders' edges on");
    assert!(off > 0, "the scene tests nothing if the vertex contacts alone keep the rim under ({off})");
}

#[test]
fn the_bar_and_the_cube_stay_out_of_the_torn_curtain() {
    // after the ball's hit the torn curtain falls over the bar the cube rides
    let [on, off] = piercings("tearing");
    assert_eq!(on, 0, "bar or cube edges through the curtain with the colliders' edges on");
    assert!(off > 0, "the scene tests nothing if the vertex contacts alone keep the edges out ({off})");
}
