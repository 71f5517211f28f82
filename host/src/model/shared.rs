//! What a snapshot shares with its copies.
//!
//! A copy of a [`Snapshot`](super::Snapshot) is what a plugin call works
//! on when calls run in parallel over one cluster view: each call assumes
//! its own pods on its own copy while the view goes on changing. Copying
//! must therefore cost reference counts, not the cluster. Pods and the
//! pods per node, which a placement changes one at a time, are in
//! [`CowVec`]s, copied on write element by element; the rest (nodes,
//! groups, budgets, the requested columns) is in [`SharedVec`]s or behind
//! an [`Arc`], copied on write whole ([`Arc::make_mut`]) and contiguous for
//! the scans that read it.

use std::ops::Deref;
use std::sync::Arc;

/// A vector shared between a snapshot and its copies, copied on write:
/// cloning it is one reference count; changing an element copies the
/// vector of pointers (not the elements) and then that element alone, and
/// only while a copy still shares them. Reads see a slice of `Arc<T>`,
/// which dereferences to `T`.
#[derive(Debug)]
pub struct CowVec<T>(Arc<Vec<Arc<T>>>);

impl<T> Clone for CowVec<T> {
    fn clone(&self) -> Self {
        CowVec(Arc::clone(&self.0))
    }
}

impl<T> Default for CowVec<T> {
    fn default() -> Self {
        CowVec(Arc::default())
    }
}

impl<T> Deref for CowVec<T> {
    type Target = [Arc<T>];

    fn deref(&self) -> &[Arc<T>] {
        &self.0
    }
}

impl<T> FromIterator<T> for CowVec<T> {
    fn from_iter<I: IntoIterator<Item = T>>(items: I) -> Self {
        CowVec(Arc::new(items.into_iter().map(Arc::new).collect()))
    }
}

impl<T> From<Vec<T>> for CowVec<T> {
    fn from(items: Vec<T>) -> Self {
        items.into_iter().collect()
    }
}

impl<'a, T> IntoIterator for &'a CowVec<T> {
    type Item = &'a Arc<T>;
    type IntoIter = std::slice::Iter<'a, Arc<T>>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl<'a, T: Clone> IntoIterator for &'a mut CowVec<T> {
    type Item = &'a mut T;
    type IntoIter = std::iter::Map<std::slice::IterMut<'a, Arc<T>>, fn(&mut Arc<T>) -> &mut T>;

    fn into_iter(self) -> Self::IntoIter {
        Arc::make_mut(&mut self.0)
            .iter_mut()
            .map(Arc::make_mut as fn(&mut Arc<T>) -> &mut T)
    }
}

impl<T: Clone> CowVec<T> {
    /// Element `i`, for writing (copied first if a copy shares it).
    ///
    /// # Panics
    /// When `i` is out of range, as indexing does.
    pub fn get_mut(&mut self, i: usize) -> &mut T {
        Arc::make_mut(&mut Arc::make_mut(&mut self.0)[i])
    }

    /// Every element, for writing (each copied first if a copy shares it).
    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut T> {
        self.into_iter()
    }

    /// The vector itself, for changes of its shape (push, insert, remove,
    /// sort); its elements stay shared.
    pub fn vec_mut(&mut self) -> &mut Vec<Arc<T>> {
        Arc::make_mut(&mut self.0)
    }

    /// Appends `item`.
    pub fn push(&mut self, item: T) {
        self.vec_mut().push(Arc::new(item));
    }

    /// Inserts `item` at `i`.
    pub fn insert(&mut self, i: usize, item: T) {
        self.vec_mut().insert(i, Arc::new(item));
    }

    /// Removes element `i`, shifting the rest down.
    pub fn remove(&mut self, i: usize) {
        self.vec_mut().remove(i);
    }

    /// Applies `change` to the elements `wanted` picks, copying only those
    /// (and the vector of pointers) while a copy shares them: a model
    /// change that moves a few ids copies no more than it moves.
    pub fn update_where(&mut self, wanted: impl Fn(&T) -> bool, mut change: impl FnMut(&mut T)) {
        let Some(first) = self.iter().position(|item| wanted(item)) else {
            return;
        };
        for item in &mut self.vec_mut()[first..] {
            if wanted(item) {
                change(Arc::make_mut(item));
            }
        }
    }
}

/// A vector shared between a snapshot and its copies, copied on write
/// whole: cloning it is one reference count; changing it copies it first
/// while a copy still shares it. For what only the model changes, read far
/// more often than written; reads see a slice of `T`.
#[derive(Debug)]
pub struct SharedVec<T>(Arc<Vec<T>>);

impl<T> Clone for SharedVec<T> {
    fn clone(&self) -> Self {
        SharedVec(Arc::clone(&self.0))
    }
}

impl<T> Default for SharedVec<T> {
    fn default() -> Self {
        SharedVec(Arc::default())
    }
}

impl<T> Deref for SharedVec<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        &self.0
    }
}

impl<T> From<Vec<T>> for SharedVec<T> {
    fn from(items: Vec<T>) -> Self {
        SharedVec(Arc::new(items))
    }
}

impl<T> FromIterator<T> for SharedVec<T> {
    fn from_iter<I: IntoIterator<Item = T>>(items: I) -> Self {
        SharedVec(Arc::new(items.into_iter().collect()))
    }
}

impl<'a, T> IntoIterator for &'a SharedVec<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl<'a, T: Clone> IntoIterator for &'a mut SharedVec<T> {
    type Item = &'a mut T;
    type IntoIter = std::slice::IterMut<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        Arc::make_mut(&mut self.0).iter_mut()
    }
}

impl<T: Clone> SharedVec<T> {
    /// Element `i`, for writing (the vector copied first if a copy shares
    /// it).
    ///
    /// # Panics
    /// When `i` is out of range, as indexing does.
    pub fn get_mut(&mut self, i: usize) -> &mut T {
        &mut Arc::make_mut(&mut self.0)[i]
    }

    /// Every element, for writing.
    pub fn iter_mut(&mut self) -> std::slice::IterMut<'_, T> {
        self.into_iter()
    }

    /// The vector itself, for writing.
    pub fn vec_mut(&mut self) -> &mut Vec<T> {
        Arc::make_mut(&mut self.0)
    }

    /// Appends `item`.
    pub fn push(&mut self, item: T) {
        self.vec_mut().push(item);
    }

    /// Inserts `item` at `i`.
    pub fn insert(&mut self, i: usize, item: T) {
        self.vec_mut().insert(i, item);
    }

    /// Removes element `i`, shifting the rest down; returns it.
    pub fn remove(&mut self, i: usize) -> T {
        self.vec_mut().remove(i)
    }

    /// Applies `change` to the elements `wanted` picks; the vector is
    /// copied only if one is picked while a copy shares it.
    pub fn update_where(&mut self, wanted: impl Fn(&T) -> bool, mut change: impl FnMut(&mut T)) {
        if self.iter().any(&wanted) {
            self.vec_mut()
                .iter_mut()
                .filter(|item| wanted(&**item))
                .for_each(&mut change);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_is_untouched_by_writes_to_the_original_and_shares_what_was_not_written() {
        let mut original: CowVec<Vec<u32>> = vec![vec![1], vec![2], vec![3]].into();
        let copy = original.clone();
        original.get_mut(1).push(20);
        original.push(vec![4]);
        assert_eq!(copy.len(), 3);
        assert_eq!(*copy[1], vec![2]);
        assert_eq!(*original[1], vec![2, 20]);
        assert!(Arc::ptr_eq(&copy[0], &original[0]));
        assert!(!Arc::ptr_eq(&copy[1], &original[1]));
        // A change picks what it writes: the rest stays shared.
        let again = original.clone();
        original.update_where(|v| v.len() > 1, |v| v.push(0));
        assert!(Arc::ptr_eq(&again[0], &original[0]));
        assert!(!Arc::ptr_eq(&again[1], &original[1]));
        assert_eq!(*original[1], vec![2, 20, 0]);
        // Once the copies are gone, the original is written in place.
        drop((copy, again));
        let before = Arc::as_ptr(&original[2]);
        original.get_mut(2).push(30);
        assert_eq!(Arc::as_ptr(&original[2]), before);
    }
}
