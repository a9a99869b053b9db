//! [`Matrix`]: the row-major matrix that `#[grad(jacobian)]` returns for a Jacobian block
//! whose number of columns is known only at run time (a differentiated slice).

use alloc::vec::Vec;
use core::ops::{Index, IndexMut};

/// A dense matrix stored row by row: row `i` is `as_slice()[i * cols..(i + 1) * cols]`.
///
/// A Jacobian block of `#[grad(jacobian)]` has one row per output number and one column
/// per number of the parameter. Index it by row and column, `j[(i, k)]`, or take a row as
/// a slice, `j[i][k]` or `j.row(i)`.
///
/// ```
/// use autodiff_runtime::Matrix;
/// let mut m = Matrix::zeros(2, 3);
/// m[(1, 2)] = 5.0;
/// assert_eq!(m[1], [0.0, 0.0, 5.0]);
/// assert_eq!(m.as_slice(), &[0.0, 0.0, 0.0, 0.0, 0.0, 5.0]);
/// assert_eq!(m.transpose()[(2, 1)], 5.0);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Matrix<T = f64> {
    rows: usize,
    cols: usize,
    data: Vec<T>,
}

impl<T: Copy + Default> Matrix<T> {
    /// A `rows × cols` matrix of zeros.
    #[must_use]
    pub fn zeros(rows: usize, cols: usize) -> Self {
        Matrix {
            rows,
            cols,
            data: alloc::vec![T::default(); rows * cols],
        }
    }

    /// The transpose, a `cols × rows` matrix.
    #[must_use]
    pub fn transpose(&self) -> Self {
        let mut out = Matrix::zeros(self.cols, self.rows);
        for i in 0..self.rows {
            for k in 0..self.cols {
                out.data[k * self.rows + i] = self.data[i * self.cols + k];
            }
        }
        out
    }
}

impl<T> Matrix<T> {
    /// A matrix of the given shape from its elements, row after row.
    ///
    /// # Panics
    /// If `data.len()` is not `rows * cols`.
    #[must_use]
    pub fn from_row_major(rows: usize, cols: usize, data: Vec<T>) -> Self {
        assert_eq!(
            data.len(),
            rows * cols,
            "a {rows} × {cols} matrix has {} elements, not {}",
            rows * cols,
            data.len()
        );
        Matrix { rows, cols, data }
    }

    /// The number of rows.
    #[must_use]
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The number of columns.
    #[must_use]
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// `(rows, cols)`.
    #[must_use]
    pub fn shape(&self) -> (usize, usize) {
        (self.rows, self.cols)
    }

    /// Row `i`, a slice of `cols()` elements.
    ///
    /// # Panics
    /// If `i >= rows()`.
    #[must_use]
    pub fn row(&self, i: usize) -> &[T] {
        assert!(i < self.rows, "row {i} of a matrix of {} rows", self.rows);
        &self.data[i * self.cols..(i + 1) * self.cols]
    }

    /// The rows, in order.
    pub fn row_iter(&self) -> impl Iterator<Item = &[T]> {
        (0..self.rows).map(move |i| self.row(i))
    }

    /// Every element, row after row.
    #[must_use]
    pub fn as_slice(&self) -> &[T] {
        &self.data
    }

    /// Every element, row after row, to write.
    #[must_use]
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        &mut self.data
    }

    /// The elements, row after row, without copying them.
    #[must_use]
    pub fn into_vec(self) -> Vec<T> {
        self.data
    }
}

impl<T> Index<usize> for Matrix<T> {
    type Output = [T];

    fn index(&self, i: usize) -> &[T] {
        self.row(i)
    }
}

impl<T> IndexMut<usize> for Matrix<T> {
    fn index_mut(&mut self, i: usize) -> &mut [T] {
        assert!(i < self.rows, "row {i} of a matrix of {} rows", self.rows);
        &mut self.data[i * self.cols..(i + 1) * self.cols]
    }
}

impl<T> Index<(usize, usize)> for Matrix<T> {
    type Output = T;

    fn index(&self, (i, k): (usize, usize)) -> &T {
        &self.row(i)[k]
    }
}

impl<T> IndexMut<(usize, usize)> for Matrix<T> {
    fn index_mut(&mut self, (i, k): (usize, usize)) -> &mut T {
        &mut self[i][k]
    }
}
