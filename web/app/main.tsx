document.body.textContent = 'placeholder';
